// The evidence source names the service writes for itself (docs/record-format.md, Evidence basis):
// `observed` evidence carries `source: "passport-service"`. A tenant's asserted evidence under
// that name, or one a reader would take for it (other case, spacing, punctuation, fullwidth
// letters), would pass for the service's own observation, so the control plane refuses it.

/** The source of the evidence the service's own checks produce. */
export const SERVICE_EVIDENCE_SOURCE = "passport-service";

/** Source names only the service may write. */
const RESERVED_SOURCES: readonly string[] = [SERVICE_EVIDENCE_SOURCE, "passport-identity-service"];

/** Letters and digits alone, after compatibility normalisation and case folding. */
const skeleton = (name: string) =>
  name
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, "");

/**
 * True when `source` is, or reads as, a source name the service reserves for itself.
 * @example
 * isReservedEvidenceSource("Passport Service"); // true
 * isReservedEvidenceSource("Acme audit team"); // false
 */
export function isReservedEvidenceSource(source: string): boolean {
  const own = skeleton(source);
  return RESERVED_SOURCES.some((reserved) => own.startsWith(skeleton(reserved)));
}
