// Reads every record of the WARC files named on the command line with warcio (npm), checks each
// record's WARC-Block-Digest and, where the record holds its payload, its WARC-Payload-Digest, and
// prints one JSON line per record. strata's TestWARCReadByWarcio runs it; CI installs warcio.
// Usage: STRATA_TEST_WARCIO=<dir with node_modules/warcio> node warcio-check.mjs FILE...
import fs from "node:fs";
import crypto from "node:crypto";
import path from "node:path";
import { pathToFileURL } from "node:url";

// The directory npm installed warcio into (STRATA_TEST_WARCIO), so no install sits beside the sources.
const dir = process.env.STRATA_TEST_WARCIO;
const { WARCParser } = await import(pathToFileURL(path.join(dir, "node_modules/warcio/dist/index.js")).href);

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
function base32(buf) {
  let bits = 0, value = 0, out = "";
  for (const byte of buf) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  while (out.length % 8) out += "=";
  return out;
}
const sha1 = (b) => "sha1:" + base32(crypto.createHash("sha1").update(b).digest());

let bad = 0;
for (const file of process.argv.slice(2)) {
  const parser = new WARCParser(fs.createReadStream(file), { parseHttp: false });
  for await (const record of parser) {
    const block = Buffer.from(await record.readFully(false));
    const h = record.warcHeaders.headers;
    const type = record.warcType;
    const problems = [];
    if (h.get("WARC-Block-Digest") !== sha1(block)) problems.push("block digest");
    const ct = h.get("Content-Type") || "";
    let payload = block;
    if (ct.startsWith("application/http")) {
      const end = block.indexOf("\r\n\r\n");
      payload = end < 0 ? Buffer.alloc(0) : block.subarray(end + 4);
    }
    const pd = h.get("WARC-Payload-Digest");
    if (pd && type !== "revisit" && pd !== sha1(payload)) problems.push("payload digest");
    if (problems.length) bad++;
    console.log(JSON.stringify({
      file: file.split("/").pop(), offset: parser.offset, type, uri: h.get("WARC-Target-URI") || "",
      profile: h.get("WARC-Profile") || "", refersTo: h.get("WARC-Refers-To") || "", problems,
    }));
  }
}
process.exit(bad ? 1 : 0);
