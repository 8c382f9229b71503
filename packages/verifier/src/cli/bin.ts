#!/usr/bin/env node
import { readFile } from "node:fs/promises";
import { run } from "./main.ts";

process.exitCode = await run(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(`${text}\n`),
  stderr: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
  readFile: (path) => readFile(path, "utf8"),
});
