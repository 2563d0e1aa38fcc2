// A real OpenID Connect provider (panva's oidc-provider) for the browser tests of claimpool's
// sign-in with OpenID Connect, on plain http at 127.0.0.1:
//
//   node end2end/oidc/provider.mjs --port 0 --client-id ID --client-secret SECRET \
//     --redirect-uri URI [--redirect-uri URI ...]
//
// Once listening it prints one line `issuer: http://127.0.0.1:<port>` on stdout and nothing else
// there (oidc-provider's notices and warnings go to stderr). One confidential client
// (client_secret_basic or client_secret_post, authorization code flow, PKCE S256 required); the
// built-in development login and consent pages take any login name (and any password).
//
// Claims: the ID token AND the userinfo endpoint both carry sub, and for the scopes granted
// preferred_username and name (`profile`) and email and email_verified (`email`)
// (conformIdTokenClaims: false puts the scopes' claims in the code flow's ID token too). ID tokens
// are signed with RS256, by an RSA key made anew at every start. Everything is in memory.
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { parseArgs } from "node:util";

// oidc-provider prints its notices with console.info, which is stdout: keep stdout for the
// issuer line alone.
console.log = console.info = console.error;

const { default: Provider } = await import("oidc-provider");

const { values: args } = parseArgs({
  options: {
    port: { type: "string", default: "0" },
    "client-id": { type: "string" },
    "client-secret": { type: "string" },
    "redirect-uri": { type: "string", multiple: true },
  },
});
if (!args["client-id"] || !args["client-secret"] || !args["redirect-uri"]?.length) {
  console.error("usage: provider.mjs --port N --client-id ID --client-secret SECRET --redirect-uri URI...");
  process.exit(2);
}

// An RS256 signing key (the relying party's openidconnect crate expects RS256 ID tokens).
const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: "jwk" }), kid: "e2e-rs256", alg: "RS256", use: "sig" };

const configuration = {
  clients: [
    {
      client_id: args["client-id"],
      client_secret: args["client-secret"],
      redirect_uris: args["redirect-uri"],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      // client_secret_post is accepted too: oidc-provider takes either for a client of these two.
      token_endpoint_auth_method: "client_secret_basic",
      id_token_signed_response_alg: "RS256",
    },
  ],
  jwks: { keys: [signingKey] },
  pkce: { required: () => true }, // S256 is the only method oidc-provider accepts
  features: { devInteractions: { enabled: true } }, // the built-in login and consent pages
  scopes: ["openid", "profile", "email"],
  claims: {
    openid: ["sub"],
    profile: ["preferred_username", "name"],
    email: ["email", "email_verified"],
  },
  conformIdTokenClaims: false,
  // Any login name is an account whose sub is that name.
  async findAccount(_ctx, sub) {
    return {
      accountId: sub,
      async claims() {
        return { sub, preferred_username: sub, name: sub, email: `${sub}@example.org`, email_verified: true };
      },
    };
  },
  // Signed cookies. Over http they are not `Secure` (oidc-provider sets that only on https
  // requests) and SameSite=Lax, which is all a same-host browser flow needs.
  cookies: { keys: [randomBytes(32).toString("hex")] },
};

let handle;
const server = createServer((req, res) => handle(req, res));
server.on("error", (err) => {
  console.error(err);
  process.exit(1);
});
server.listen(Number(args.port), "127.0.0.1", () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, configuration);
  provider.on("server_error", (_ctx, err) => console.error("server_error:", err));
  handle = provider.callback();
  process.stdout.write(`issuer: ${issuer}\n`);
});
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => process.exit(0));
