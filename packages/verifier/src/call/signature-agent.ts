// The `Signature-Agent` header (draft-ietf-webbotauth-httpsig-protocol): read in its RFC 8941
// dictionary form and in the legacy bare string of the earlier drafts, written in either. Apart from
// web-bot-auth.ts, which signs and checks requests, because it is a small structured-field reader
// of its own.
import { insecureAddress } from "../http.ts";

/** The dictionary member name this signer gives its agent in `Signature-Agent`. */
const SIGNATURE_AGENT_LABEL = "agent";

/** One agent a `Signature-Agent` header names. */
interface SignatureAgent {
  /** Its dictionary member name; absent in the legacy form. */
  label?: string;
  /** Where its keys are described (a key directory, a JWK Set or a Signature Agent Card). */
  url: string;
  /** The member's `type` parameter, when it has one (the drafts' `directory`, `jwks_uri`, `cimd`). */
  type?: string;
}

type SignatureAgentReading =
  | { ok: true; form: "dictionary" | "legacy"; agents: SignatureAgent[] }
  | { ok: false; detail: string };

const SF_KEY = /[a-z*][a-z0-9_\-.*]*/y;
const SF_TOKEN = /[A-Za-z*][A-Za-z0-9:/!#$%&'*+\-.^_`|~]*/y;
const SF_INTEGER = /-?\d{1,15}/y;

/**
 * A cursor over one structured field value (RFC 8941 section 4.2), reading the parts a
 * `Signature-Agent` is made of: keys, strings and the bare items of parameters.
 */
class FieldReader {
  at = 0;
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }

  done(): boolean {
    return this.at >= this.text.length;
  }

  peek(): string | undefined {
    return this.text[this.at];
  }

  skip(pattern: RegExp): void {
    while (!this.done() && pattern.test(this.peek() as string)) this.at++;
  }

  match(pattern: RegExp): string | undefined {
    pattern.lastIndex = this.at;
    const found = pattern.exec(this.text);
    if (!found) return undefined;
    this.at += found[0].length;
    return found[0];
  }

  /** An sf-string: printable ASCII in quotes, only `\"` and `\\` escaped (section 4.2.5). */
  string(): string | undefined {
    if (this.peek() !== '"') return undefined;
    this.at++;
    let value = "";
    while (!this.done()) {
      const char = this.text[this.at++] as string;
      if (char === '"') return value;
      if (char === "\\") {
        const next = this.text[this.at++];
        if (next !== '"' && next !== "\\") return undefined;
        value += next;
      } else if (char < "\x20" || char > "\x7e") {
        return undefined;
      } else value += char;
    }
    return undefined;
  }

  /** Parameters (section 4.2.3.2): `;key[=bare-item]`, the last of a repeated key winning. */
  parameters(): Map<string, string | number | boolean> | undefined {
    const parameters = new Map<string, string | number | boolean>();
    while (this.peek() === ";") {
      this.at++;
      this.skip(/ /);
      const key = this.match(SF_KEY);
      if (!key) return undefined;
      if (this.peek() !== "=") {
        parameters.set(key, true);
        continue;
      }
      this.at++;
      const value =
        this.peek() === '"'
          ? this.string()
          : this.peek() === "?"
            ? this.match(/\?[01]/y)?.endsWith("1")
            : (this.match(SF_TOKEN) ?? this.match(SF_INTEGER));
      if (value === undefined) return undefined;
      parameters.set(key, value);
    }
    return parameters;
  }
}

function agentUrl(url: string): string | undefined {
  return insecureAddress(url) === undefined && url.startsWith("https:") ? url : undefined;
}

/**
 * Reads a `Signature-Agent` header: the dictionary form of draft-ietf-webbotauth-httpsig-protocol
 * (`agent="https://agent.example/.well-known/http-message-signatures-directory"`, each member an
 * RFC 8941 string naming an https URL, parameters allowed), or the legacy bare string of the
 * earlier drafts (`"https://…"`), still read and deprecated. Anything else is refused.
 * @example
 * readSignatureAgent('agent="https://agent.example/keys";type=jwks_uri');
 * // { ok: true, form: "dictionary", agents: [{ label: "agent", url: "https://agent.example/keys", type: "jwks_uri" }] }
 */
export function readSignatureAgent(value: string): SignatureAgentReading {
  const reader = new FieldReader(value.trim());
  const malformed = (why: string): SignatureAgentReading => ({
    ok: false,
    detail: `The Signature-Agent header is not an RFC 8941 dictionary of https URL strings: ${why}.`,
  });
  if (reader.done()) return malformed("it is empty");
  if (reader.peek() === '"') {
    const url = reader.string();
    if (url === undefined || !reader.done()) return malformed("the legacy form is one string and nothing else");
    return agentUrl(url) ? { ok: true, form: "legacy", agents: [{ url }] } : malformed(`"${url}" is not an https URL`);
  }
  const members = new Map<string, SignatureAgent>();
  for (;;) {
    const label = reader.match(SF_KEY);
    if (!label) return malformed(`a member name is expected at character ${reader.at + 1}`);
    if (reader.peek() !== "=") return malformed(`member ${label} has no value`);
    reader.at++;
    const url = reader.string();
    if (url === undefined) return malformed(`member ${label} is not a string`);
    const parameters = reader.parameters();
    if (!parameters) return malformed(`member ${label} has malformed parameters`);
    if (!agentUrl(url)) return malformed(`member ${label} ("${url}") is not an https URL`);
    const type = parameters.get("type");
    // Section 4.2.2: a repeated member name replaces the earlier member.
    members.set(label, { label, url, ...(typeof type === "string" ? { type } : {}) });
    reader.skip(/[ \t]/);
    if (reader.done()) break;
    if (reader.peek() !== ",") return malformed(`"," is expected at character ${reader.at + 1}`);
    reader.at++;
    reader.skip(/[ \t]/);
    if (reader.done()) return malformed("it ends with a comma");
  }
  return { ok: true, form: "dictionary", agents: [...members.values()] };
}

/** A `Signature-Agent` value naming `url`, in the form the signer was asked for. */
export function signatureAgentValue(url: string, form: "dictionary" | "legacy"): string {
  const string = `"${url.replace(/[\\"]/g, "\\$&")}"`;
  return form === "legacy" ? string : `${SIGNATURE_AGENT_LABEL}=${string}`;
}
