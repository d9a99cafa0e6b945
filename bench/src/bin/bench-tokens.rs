//! What validating an OAuth access token costs (issue 28): `JwtValidator` with its key cached,
//! against the bare signature check of `jsonwebtoken` with the same key, measured in one run.
//!
//! ```text
//! cargo run --release -p mcp-tasks-bench --bin bench-tokens [-- --tokens N]
//! ```
//!
//! For RS256 (2048-bit RSA, what Keycloak, Auth0 and Entra ID sign with by default) and ES256 it
//! makes a key, publishes it as a JWKS from a loopback HTTP endpoint of its own, signs N tokens
//! (each a different `sub`, so no cache of answers could help), lets the validator fetch the key
//! once, then times N validations on one thread, in rounds taken in turn (the median round
//! counts): the validator's (header read for a readable refusal, `typ`, the key looked up by
//! `kid`, then issuer, audience and time checks) and the library's bare `decode` with the key as
//! the validator holds it (made from the JWK) and the same checks. The ratio is the library's
//! time over the validator's: 1.0, the validator adds nothing.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use mcp_tasks_runtime::server::oauth::{JwtValidator, TokenValidator};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const ISSUER: &str = "https://issuer.bench.invalid";
const AUDIENCE: &str = "https://mcp.bench.invalid/mcp";
/// Rounds of the validator and the library in turn.
const ROUNDS: usize = 10;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let tokens = match args.iter().position(|a| a == "--tokens") {
        Some(at) => args.get(at + 1).ok_or("--tokens needs a number")?.parse()?,
        None => 20_000,
    };
    if cfg!(debug_assertions) {
        eprintln!("warning: not a release build; figures mean little (use --release)");
    }
    println!(
        "{:<8} {:>14} {:>14} {:>8} {:>12} {:>14}",
        "alg", "validator/s", "jsonwebtoken/s", "ratio", "µs/token", "same token/s"
    );
    for alg in [Algorithm::RS256, Algorithm::ES256] {
        let row = measure(alg, &key(alg)?, tokens).await?;
        println!(
            "{:<8} {:>14.0} {:>14.0} {:>8.2} {:>12.1} {:>14.0}",
            format!("{alg:?}"),
            row.validator,
            row.library,
            row.validator / row.library,
            1e6 / row.validator,
            row.again,
        );
    }
    println!(
        "validator/s: JwtValidator::validate with the key cached; jsonwebtoken/s: jsonwebtoken::decode \
         with the same key and checks; ratio: the two rates divided (1.0: the validator adds nothing); \
         same token/s: the validator given one token again and again (kept once it passed)."
    );
    Ok(())
}

/// A fresh private key for `alg`.
fn key(alg: Algorithm) -> Result<EncodingKey, Box<dyn std::error::Error>> {
    let mut rng = rand_core::OsRng;
    Ok(match alg {
        Algorithm::RS256 => {
            use rsa::pkcs1::EncodeRsaPrivateKey;
            let private = rsa::RsaPrivateKey::new(&mut rng, 2048)?;
            EncodingKey::from_rsa_der(private.to_pkcs1_der()?.as_bytes())
        }
        _ => {
            use p256::pkcs8::EncodePrivateKey;
            let private = p256::ecdsa::SigningKey::random(&mut rng);
            EncodingKey::from_ec_der(private.to_pkcs8_der()?.as_bytes())
        }
    })
}

/// Validations per second: the validator's and the library's.
struct Row {
    validator: f64,
    library: f64,
    /// The validator, given the same token each time.
    again: f64,
}

async fn measure(
    alg: Algorithm,
    encoding: &EncodingKey,
    n: usize,
) -> Result<Row, Box<dyn std::error::Error>> {
    let kid = format!("bench-{alg:?}");
    let mut jwk = Jwk::from_encoding_key(encoding, alg)?;
    jwk.common.key_id = Some(kid.clone());
    let published = jwk.clone();
    let jwks = serde_json::to_string(&JwkSet { keys: vec![jwk] })?;
    let jwks_uri = serve_once_and_again(jwks).await?;

    let now = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs();
    let mut header = Header::new(alg);
    header.kid = Some(kid);
    let tokens = (0..n)
        .map(|i| {
            let claims = json!({
                "iss": ISSUER, "aud": AUDIENCE, "sub": format!("user-{i}"),
                "iat": now, "nbf": now, "exp": now + 3600, "scope": "research notes",
            });
            jsonwebtoken::encode(&header, &claims, encoding)
        })
        .collect::<Result<Vec<_>, _>>()?;

    let validator = JwtValidator::new(ISSUER, AUDIENCE).jwks_uri(jwks_uri);
    // The first token fetches the key; every other one finds it cached.
    let first = validator.validate(&tokens[0]).await?;
    assert_eq!(first.subject, "user-0");

    // The library, with the key as the validator holds it: made from the published JWK.
    let decoding = DecodingKey::from_jwk(&published)?;
    let mut validation = Validation::new(alg);
    validation.set_issuer(&[ISSUER]);
    validation.set_audience(&[AUDIENCE]);
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    validation.validate_nbf = true;
    validation.leeway = 30;

    // Rounds of each in turn, so that what else the machine does falls on both; the median
    // round of each counts.
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for (i, round) in tokens.chunks(tokens.len().div_ceil(ROUNDS)).enumerate() {
        // Which goes first alternates: the second of a pair runs on warmer caches.
        for ours_now in [i % 2 == 0, i % 2 == 1] {
            let start = Instant::now();
            for token in round {
                if ours_now {
                    validator.validate(token).await?;
                } else {
                    jsonwebtoken::decode::<serde_json::Value>(token, &decoding, &validation)?;
                }
            }
            let r = rate(round.len(), start.elapsed());
            if ours_now {
                ours.push(r)
            } else {
                theirs.push(r)
            }
        }
    }
    // One token again and again, as a client sends it with every request: kept once it passed.
    let start = Instant::now();
    for _ in 0..n {
        validator.validate(&tokens[0]).await?;
    }
    Ok(Row {
        validator: median(ours),
        library: median(theirs),
        again: rate(n, start.elapsed()),
    })
}

fn median(mut rates: Vec<f64>) -> f64 {
    rates.sort_by(f64::total_cmp);
    rates[rates.len() / 2]
}

fn rate(n: usize, took: Duration) -> f64 {
    n as f64 / took.as_secs_f64()
}

/// Serves `body` as JSON to every request on a loopback port of its own; the URL.
async fn serve_once_and_again(body: String) -> std::io::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/jwks", listener.local_addr()?);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let body = body.clone();
            tokio::spawn(async move {
                let mut request = [0u8; 4096];
                let _ = stream.read(&mut request).await;
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                     connection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    Ok(url)
}
