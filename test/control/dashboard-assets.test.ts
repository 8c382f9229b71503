import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

async function sha256Hex(body: ArrayBuffer): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", body));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

describe("Dashboard static files", () => {
  it("are linked from every page by the content hash of the file the assets layer serves", async () => {
    const response = await exports.default.fetch("http://control.test/dashboard/sign-in");
    expect(response.status).toBe(200);
    const html = await response.text();
    for (const file of ["dashboard.css", "dashboard.js"]) {
      const asset = await env.ASSETS.fetch(`http://control.test/assets/${file}`);
      expect(asset.status).toBe(200);
      const hash = await sha256Hex(await asset.arrayBuffer());
      const linked = new RegExp(`"/assets/${file.replace(".", "\\.")}\\?v=([0-9a-f]+)"`).exec(html)?.[1];
      expect(linked, file).toBeDefined();
      expect(hash.startsWith(linked ?? "-")).toBe(true);
      expect(linked?.length).toBeGreaterThanOrEqual(12);
    }
  });
});
