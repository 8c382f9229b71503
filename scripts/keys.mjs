// Record-signing key rotation (docs/signing.md).
//   npm run keys -- rotate         new key: prints the private JWK for the SIGNING_KEY secret and
//                                  adds the public key in front of SIGNING_JWKS in wrangler.toml
//   npm run keys -- retire <kid>   removes a public key from SIGNING_JWKS; records it signed then
//                                  fail verification with unknown_key
//   npm run keys -- list           shows the key ids SIGNING_JWKS trusts, and the development key
//                                  that `npm start` and the tests sign with instead
//   npm run keys -- log <origin>   new transparency-log key (docs/transparency-log.md): prints the
//                                  private JWK for LOG_SIGNING_KEY and, on stderr, the verifier key
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { root } from "./dev-auth.mjs";
import { logKeyPair, signingKeyPair } from "./dev-keys.mjs";

const configFile = join(root, "wrangler.toml");
const LINE = /^SIGNING_JWKS = '(.*)'$/m;

function readJwks() {
  const match = LINE.exec(readFileSync(configFile, "utf8"));
  if (!match) throw new Error("wrangler.toml has no SIGNING_JWKS line");
  return JSON.parse(match[1]);
}

function writeJwks(jwks) {
  const config = readFileSync(configFile, "utf8");
  writeFileSync(configFile, config.replace(LINE, `SIGNING_JWKS = '${JSON.stringify(jwks)}'`));
}

const [command, argument] = process.argv.slice(2);
const jwks = readJwks();
if (command === "rotate") {
  const kid = `rec-${new Date().toISOString().slice(0, 10)}-${crypto.randomUUID().slice(0, 6)}`;
  const { publicJwk, privateJwk } = await signingKeyPair("ES256", kid);
  writeJwks({ keys: [JSON.parse(publicJwk), ...jwks.keys] });
  process.stderr.write(
    `Added ${kid} to SIGNING_JWKS in wrangler.toml. Deploy the resolver first, then store this private key:\n` +
      "  wrangler secret put SIGNING_KEY -c workers/control/wrangler.toml\n" +
      "and paste the next line when asked. It is printed once and written nowhere.\n",
  );
  console.log(privateJwk);
} else if (command === "retire" && argument) {
  const remaining = jwks.keys.filter((key) => key.kid !== argument);
  if (remaining.length === jwks.keys.length) {
    console.error(`no key ${argument} in SIGNING_JWKS`);
    process.exit(1);
  }
  writeJwks({ keys: remaining });
  console.error(`Removed ${argument}; records it signed now fail verification with unknown_key.`);
} else if (command === "log" && argument) {
  const { privateJwk, verifierKey } = await logKeyPair(argument);
  process.stderr.write(
    `Log verifier key (put it in the settings' logVerifierKey, or LOG_VERIFIER_KEY):\n  ${verifierKey}\n` +
      "Store this private key with: wrangler secret put LOG_SIGNING_KEY -c workers/control/wrangler.toml\n",
  );
  console.log(privateJwk);
} else if (command === "list") {
  // `npm start` does not sign with SIGNING_JWKS's keys: it signs with a key of its own, made on first use
  // (recordSigningKeys in scripts/dev-auth.mjs), so that key is listed too, and said to be local.
  const deployed = jwks.keys.map((key) => `  ${key.kid}`);
  console.log("SIGNING_JWKS in wrangler.toml (what a deployed resolver's consumers trust):");
  console.log(deployed.length > 0 ? deployed.join("\n") : "  none yet: `npm run keys -- rotate` makes the first");
  const developmentKey = join(root, ".wrangler", "dev-auth", "record-signing.json");
  console.log("Development key (what `npm start` signs records with; never deployed):");
  console.log(
    existsSync(developmentKey)
      ? `  ${JSON.parse(readFileSync(developmentKey, "utf8")).publicJwk.kid}  (.wrangler/dev-auth/record-signing.json)`
      : "  none yet: `npm start` makes it on first use",
  );
} else {
  console.error("usage: npm run keys -- rotate | retire <kid> | list | log <origin>");
  process.exit(64);
}
