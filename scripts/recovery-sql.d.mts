export function recoverySql(input: {
  organisation: string;
  subject: string;
  approvedBy: string;
  reason: string;
  at?: string;
}): string[];
