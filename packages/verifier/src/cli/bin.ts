#!/usr/bin/env node
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { run } from "./main.ts";

process.exitCode = await run(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(`${text}\n`),
  stderr: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
  readFile: (path) => readFile(path, "utf8"),
  writeFile: async (path, text) => {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    // Written aside and renamed, so an interrupted run never leaves half a file.
    await writeFile(`${path}.tmp`, text, { mode: 0o600 });
    await rename(`${path}.tmp`, path);
  },
});
