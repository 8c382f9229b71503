export function recoverySql(input: {
  organisation: string;
  subject: string;
  approvedBy: string;
  reason: string;
  at?: string;
}): string[];
export function shardLookupSql(organisation: string): string;
