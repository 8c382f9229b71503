/**
 * JSON that means one thing. `JSON.parse` keeps the last of two members with the same name, while
 * other parsers keep the first or refuse: a record with `"lifecycle": "revoked"` and then
 * `"lifecycle": "active"` reads differently in different consumers, though its signature covers
 * only one reading. RFC 8785 (section 3.1) and RFC 7493 require unique member names; this check
 * finds the first duplicate, at any depth, in text `JSON.parse` has already accepted.
 */

const ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

/** Deeper nesting than any record, history page or key set has; refused rather than recursed into. */
const MAX_DEPTH = 64;

class Scanner {
  i = 0;
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }

  space(): void {
    while (" \t\n\r".includes(this.text.charAt(this.i)) && this.i < this.text.length) this.i++;
  }

  /** Reads a string at the cursor (which is on its opening quote) and returns its value. */
  string(): string {
    let out = "";
    let start = ++this.i;
    for (;;) {
      const c = this.text.charAt(this.i);
      if (c === '"') {
        out += this.text.slice(start, this.i++);
        return out;
      }
      if (c === "\\") {
        out += this.text.slice(start, this.i);
        const e = this.text.charAt(this.i + 1);
        if (e === "u") {
          out += String.fromCharCode(Number.parseInt(this.text.slice(this.i + 2, this.i + 6), 16));
          this.i += 6;
        } else {
          out += ESCAPES[e] ?? e;
          this.i += 2;
        }
        start = this.i;
        continue;
      }
      this.i++;
    }
  }

  /** Returns the first problem in the value at the cursor, or undefined. */
  value(path: string, depth: number): StrictJsonProblem | undefined {
    this.space();
    const c = this.text.charAt(this.i);
    if (c === "{" || c === "[") {
      if (depth >= MAX_DEPTH) {
        return { kind: "too_deep", problem: `nesting deeper than ${MAX_DEPTH} levels at ${path || "the top"}` };
      }
      this.i++;
      this.space();
      const close = c === "{" ? "}" : "]";
      if (this.text.charAt(this.i) === close) {
        this.i++;
        return undefined;
      }
      const names = new Set<string>();
      for (let index = 0; ; index++) {
        let at: string;
        if (c === "{") {
          this.space();
          const name = this.string();
          at = path ? `${path}.${name}` : name;
          if (names.has(name)) {
            return {
              kind: "duplicate_member",
              problem: `duplicate member name "${name}" at ${path || "the top level"}`,
            };
          }
          names.add(name);
          this.space();
          this.i++; // the colon
        } else {
          at = `${path}[${index}]`;
        }
        const problem = this.value(at, depth + 1);
        if (problem) return problem;
        this.space();
        if (this.text.charAt(this.i++) === close) return undefined;
      }
    }
    if (c === '"') {
      this.string();
      return undefined;
    }
    while (this.i < this.text.length && !",]} \t\n\r".includes(this.text.charAt(this.i))) this.i++;
    return undefined;
  }
}

export interface StrictJsonProblem {
  kind: "not_json" | "duplicate_member" | "too_deep";
  problem: string;
}

/**
 * Parses JSON text, refusing text in which an object repeats a member name (at any depth), or
 * that nests deeper than any answer of the service does.
 * @example
 * strictJsonParse('{"a":1,"a":2}'); // { ok: false, kind: "duplicate_member", problem: 'duplicate member name "a" at the top level' }
 */
export function strictJsonParse(text: string): { ok: true; value: unknown } | ({ ok: false } & StrictJsonProblem) {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, kind: "not_json", problem: "not JSON" };
  }
  const problem = new Scanner(text).value("", 0);
  return problem ? { ok: false, ...problem } : { ok: true, value };
}
