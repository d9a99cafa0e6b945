//! The OAuth flags the example servers share (`example_server`, `rmcp_bridge_server`): `--oauth-issuer
//! ISSUER --oauth-audience RESOURCE_URL [--oauth-introspection ENDPOINT --oauth-client ID:SECRET]
//! [--oauth-ca-cert FILE]...`, read into one [`ResourceServer`].

use mcp_tasks_runtime::server::oauth::{
    Introspection, InvalidCertificate, JwtValidator, ResourceServer,
};

/// `--oauth-issuer ISSUER --oauth-audience RESOURCE_URL [--oauth-introspection ENDPOINT
/// --oauth-client ID:SECRET] [--oauth-ca-cert FILE]...`: an OAuth 2.1 resource server whose tokens
/// come from ISSUER and name RESOURCE_URL (this endpoint's URL) as their audience: JWTs checked
/// against the issuer's keys, or opaque tokens asked about at ENDPOINT as client ID; the issuer
/// reached over HTTPS trusting, besides the built-in roots, the CA certificates in each FILE (PEM).
#[derive(Debug, Default)]
pub struct OAuthArgs {
    issuer: Option<String>,
    audience: Option<String>,
    introspection: Option<String>,
    client: Option<String>,
    /// `--oauth-ca-cert FILE` (repeatable): PEM files of roots to trust for the issuer over HTTPS.
    ca_certs: Vec<String>,
}

impl OAuthArgs {
    /// The flags [`read`](Self::read) takes.
    pub const FLAGS: [&str; 5] = [
        "--oauth-issuer",
        "--oauth-audience",
        "--oauth-introspection",
        "--oauth-client",
        "--oauth-ca-cert",
    ];

    /// Takes `flag` (one of [`FLAGS`](Self::FLAGS)) and its value, the next of `args`; `Err` says
    /// what is wrong.
    pub fn read(
        &mut self,
        flag: &str,
        args: &mut impl Iterator<Item = String>,
    ) -> Result<(), String> {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag {
            "--oauth-issuer" => self.issuer = Some(value),
            "--oauth-audience" => self.audience = Some(value),
            "--oauth-introspection" => self.introspection = Some(value),
            "--oauth-client" => self.client = Some(value),
            "--oauth-ca-cert" => self.ca_certs.push(value),
            _ => return Err(format!("`{flag}` is not an --oauth-* flag")),
        }
        Ok(())
    }

    /// Whether any of the flags was given.
    pub fn given(&self) -> bool {
        self.issuer.is_some()
            || self.audience.is_some()
            || self.introspection.is_some()
            || self.client.is_some()
            || !self.ca_certs.is_empty()
    }

    /// The resource server the flags describe (`None` without them), named `name` in its
    /// metadata, with `research` among the scopes it supports (the example tool that needs one).
    pub fn resource_server(self, name: &str) -> Result<Option<ResourceServer>, String> {
        let (issuer, audience) = match (self.issuer, self.audience) {
            (None, None) if self.ca_certs.is_empty() => return Ok(None),
            (None, None) => {
                return Err("--oauth-ca-cert goes with --oauth-issuer (it is the CA the issuer's certificate comes from)".into());
            }
            (Some(issuer), Some(audience)) => (issuer, audience),
            _ => {
                return Err("--oauth-issuer and --oauth-audience go together (the issuer's URL, and this endpoint's URL as tokens name it)".into());
            }
        };
        let mut pems = Vec::new();
        for file in &self.ca_certs {
            let pem = std::fs::read(file).map_err(|e| format!("--oauth-ca-cert {file}: {e}"))?;
            pems.push((file, pem));
        }
        let bad_pem = |file: &str, e: InvalidCertificate| format!("--oauth-ca-cert {file}: {e}");
        let server = match self.introspection {
            Some(endpoint) => {
                let mut validator = Introspection::new(endpoint, &audience).issuer(&issuer);
                for (file, pem) in &pems {
                    validator = validator
                        .root_certificate_pem(pem)
                        .map_err(|e| bad_pem(file, e))?;
                }
                if let Some(client) = &self.client {
                    let (id, secret) = client
                        .split_once(':')
                        .ok_or("--oauth-client needs ID:SECRET")?;
                    validator = validator.client(id, secret);
                }
                ResourceServer::new(&audience, validator)
            }
            None => {
                let mut validator = JwtValidator::new(&issuer, &audience);
                for (file, pem) in &pems {
                    validator = validator
                        .root_certificate_pem(pem)
                        .map_err(|e| bad_pem(file, e))?;
                }
                ResourceServer::new(&audience, validator)
            }
        };
        let server = server.map_err(|e| format!("--oauth-audience: {e}"))?;
        Ok(Some(
            server
                .authorization_server(issuer)
                .scopes_supported(["research"])
                .resource_name(name),
        ))
    }
}
