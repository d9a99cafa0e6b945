// The MCP Apps browser test's driver (run by tests/apps_browser.rs):
//   node apps.mjs <MCP URL> <chromium> <host bundle> <screenshot.png>
// Connects to the server with the official TypeScript client, reads the app's view
// (`ui://forecast/view.html`), opens a host page in headless Chromium (playwright-core, Debian's
// chromium: no browser download), shows the view through the ext-apps host bridge with the
// result of `show_forecast`, then clicks the view's Refresh button: the app calls
// `refresh_forecast` through the bridge and shows its result. Prints the page's text and `PASS`,
// or `FAIL <why>` and exits 1.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { chromium } from "playwright-core";

const [url, chromiumPath, hostBundle, screenshot] = process.argv.slice(2);
const fail = (why) => {
  console.log(`FAIL ${why}`);
  process.exit(1);
};
setTimeout(() => fail("gave up after 60 s"), 60_000).unref();

const client = new Client({ name: "mcp-tasks-browser-host", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const view = await client.readResource({ uri: "ui://forecast/view.html" });
const html = view.contents[0].text;
console.log(`read ui://forecast/view.html: ${view.contents[0].mimeType}, ${html.length} characters`);

const browser = await chromium.launch({
  executablePath: chromiumPath,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
let outcome = "PASS";
try {
  const page = await browser.newPage({ viewport: { width: 640, height: 480 } });
  page.on("console", (m) => console.log(`page console: ${m.text()}`));
  page.on("pageerror", (e) => console.log(`page error: ${e.message}`));
  const calls = [];
  await page.exposeFunction("mcp", async (method, params) => {
    if (method !== "tools/call") throw new Error(`the host forwards tools/call only, not ${method}`);
    calls.push(params.name);
    return await client.callTool(params);
  });
  await page.setContent(
    '<!doctype html><html><head><meta charset="utf-8"><title>mcp-tasks browser host</title></head>' +
      '<body style="font: 14px sans-serif"><h3>mcp-tasks browser host</h3><div id="frame"></div><ol id="log"></ol></body></html>',
  );
  await page.addScriptTag({ path: hostBundle });
  await page.evaluate(({ html }) => window.startHost({ html, tool: "show_forecast", args: { city: "Lisbon" } }), { html });

  const app = page.frameLocator("#app");
  await app.locator("#city", { hasText: "Forecast for Lisbon" }).waitFor({ timeout: 15_000 });
  await app.locator("#days tr").nth(2).waitFor({ timeout: 15_000 });
  console.log("the app shows show_forecast's result");

  // The app's own tool call: its table emptied, Refresh clicked, and it must fill again from
  // what `refresh_forecast` answered through the bridge.
  const frame = page.frames().find((f) => f !== page.mainFrame());
  await frame.evaluate(() => document.getElementById("days").replaceChildren());
  await app.locator("#refresh").click();
  await app.locator("#days tr").nth(2).waitFor({ timeout: 15_000 });
  await page.locator("#log li", { hasText: "refresh_forecast answered: Lisbon, 3 days" }).waitFor({ timeout: 15_000 });

  const hostText = await page.locator("body").innerText();
  const appText = await frame.locator("body").innerText();
  console.log(`---- host page text ----\n${hostText}\n---- app text ----\n${appText}\n----`);
  console.log(`tools called: ${calls.join(", ")}`);
  if (calls.join(",") !== "show_forecast,refresh_forecast") outcome = `FAIL the tools called were ${calls.join(", ")}`;
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(`screenshot: ${screenshot}`);
} catch (e) {
  outcome = `FAIL ${e.message.split("\n")[0]}`;
} finally {
  await browser.close();
  await client.close();
}
console.log(outcome);
process.exit(outcome === "PASS" ? 0 : 1);
