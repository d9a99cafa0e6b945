// The official TypeScript client's skills host side (`SkillsClient`, @modelcontextprotocol/client
// ext/skills) against a server of this project, run by tests/skills_ts.rs:
//   node skills.mjs <MCP URL>
// Lists the skills, gets one, reads its SKILL.md and its other files (each verified by the
// TypeScript client against the entry: size, digest, frontmatter) and its folders. Prints what it
// saw and `PASS`, or `FAIL <why>` and exits 1.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";

const [url] = process.argv.slice(2);
setTimeout(() => {
  console.log("FAIL gave up after 30 s");
  process.exit(1);
}, 30_000).unref();
const client = new Client({ name: "mcp-tasks-ts-skills", version: "1.0.0" });
let outcome = "PASS";
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const skills = new SkillsClient(client);
  if (!skills.supported) throw new Error("SkillsClient: the server does not declare the extension");
  if (!skills.directoryRead) throw new Error("SkillsClient: no directoryRead");
  const listing = await skills.list();
  console.log(`listed: ${listing.skills.map((s) => s.uri).join(", ")}`);
  for (const entry of listing.skills) {
    const { skill } = await skills.get(entry.uri);
    const files = Array.isArray(skill.resources) ? skill.resources : [];
    for (const file of files) {
      const read = await skills.read(skill, file.uri);
      console.log(`read ${file.uri}: verified ${read.verified}, ${file.size} bytes`);
      if (read.verified !== true) throw new Error(`${file.uri} not verified`);
    }
    const root = entry.uri.slice(0, -"/SKILL.md".length);
    const dir = await skills.readDirectory(root);
    console.log(`folder ${root}: ${dir.resources.map((r) => `${r.uri} (${r.mimeType})`).join(", ")}`);
  }
} catch (e) {
  outcome = `FAIL ${e?.message ?? e}`;
} finally {
  await client.close();
}
console.log(outcome);
process.exit(outcome === "PASS" ? 0 : 1);
