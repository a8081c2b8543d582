// GraphiQL on this server's /graphql, with every library served from /vendor (no CDN).
// The token goes in the Headers tab as `Authorization: Bearer …`: over HTTP as a header,
// and for subscriptions (graphql-transport-ws) as the connection_init payload. A token the
// board holds in this tab (sessionStorage) fills it in, and one typed here is kept there.
(function () {
  "use strict";

  const TOKEN_KEY = "prickle.token";
  const PLACEHOLDER = "<paste a token>";
  const DEFAULT_QUERY = `# Prickle: send your token in the Headers tab below.
query Me {
  me { kind id owner }
}
`;

  function headersFor(token) {
    return JSON.stringify({ Authorization: `Bearer ${token || PLACEHOLDER}` }, null, 2);
  }

  function keepToken(text) {
    try {
      const value = JSON.parse(text).Authorization || "";
      const token = value.replace(/^Bearer\s+/i, "").trim();
      if (token && token !== PLACEHOLDER) sessionStorage.setItem(TOKEN_KEY, token);
    } catch (_) {
      // half-typed JSON: nothing to keep yet
    }
  }

  const url = new URL("/graphql", window.location.href);
  const subscriptionUrl = new URL(url);
  subscriptionUrl.protocol = url.protocol === "https:" ? "wss:" : "ws:";

  const fetcher = GraphiQL.createFetcher({
    url: url.toString(),
    subscriptionUrl: subscriptionUrl.toString(),
  });

  const element = React.createElement(GraphiQL, {
    fetcher,
    plugins: [GraphiQLPluginExplorer.explorerPlugin()],
    defaultQuery: DEFAULT_QUERY,
    defaultHeaders: headersFor(sessionStorage.getItem(TOKEN_KEY)),
    onEditHeaders: keepToken,
    isHeadersEditorEnabled: true,
    shouldPersistHeaders: false,
    defaultEditorToolsVisibility: "headers",
    inputValueDeprecation: true,
  });
  ReactDOM.createRoot(document.getElementById("graphiql")).render(element);
})();
