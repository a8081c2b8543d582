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

  const send = GraphiQL.createFetcher({
    url: url.toString(),
    subscriptionUrl: subscriptionUrl.toString(),
  });

  // GraphiQL sends a subscription over the WebSocket when the editor's parsed document says
  // it is one; just after an edit that document may not be parsed yet, and the subscription
  // would go over HTTP. Parse what is actually sent instead.
  function parsed(params, options) {
    try {
      return { ...options, documentAST: GraphiQL.GraphQL.parse(params.query) };
    } catch (_) {
      return options; // not parseable: the server answers with the syntax error
    }
  }

  const fetcher = (params, options) => send(params, parsed(params, options));

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
