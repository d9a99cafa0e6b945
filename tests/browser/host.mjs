// The host page's script (bundled by esbuild into one file for the page): an MCP Apps host
// reduced to its core. It shows the app's HTML in a sandboxed iframe and talks to it through the
// official host-side bridge, `AppBridge` from @modelcontextprotocol/ext-apps, over
// `PostMessageTransport`. The MCP server is reached through `window.mcp(method, params)`, which
// the test exposes from Node (the page itself has no network access to the server).
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

function log(line) {
  const item = document.createElement("li");
  item.textContent = line;
  document.getElementById("log").append(item);
}

// Loads the app, hands it the result of `tool(args)` as the host would after the model's call,
// and forwards the app's own tool calls to the server.
window.startHost = async ({ html, tool, args }) => {
  const iframe = document.createElement("iframe");
  iframe.id = "app";
  iframe.sandbox = "allow-scripts";
  iframe.style.cssText = "width: 460px; height: 230px; border: 1px solid #999;";
  document.getElementById("frame").append(iframe);

  const bridge = new AppBridge(
    null,
    { name: "mcp-tasks-browser-host", version: "1.0.0" },
    { serverTools: {}, logging: {} },
  );
  bridge.oncalltool = async (params) => {
    log(`the app called ${params.name}(${JSON.stringify(params.arguments ?? {})})`);
    const result = await window.mcp("tools/call", params);
    const forecast = result.structuredContent;
    log(`${params.name} answered: ${forecast ? `${forecast.city}, ${forecast.days.length} days` : "no forecast"}`);
    return result;
  };
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = resolve;
  });
  // The iframe's window stays the same object when srcdoc loads into it: connect first, so the
  // app's first message (`ui/initialize`) finds the bridge listening.
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = html;
  await initialized;
  log("the app initialized");
  await bridge.sendToolInput({ arguments: args });
  const result = await window.mcp("tools/call", { name: tool, arguments: args });
  await bridge.sendToolResult(result);
  log(`the host showed ${tool}(${JSON.stringify(args)})`);
};
