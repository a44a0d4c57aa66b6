//! A leaf: what "this machine only" means for a server of ours. The Host values a server answers to (its own
//! address, and `localhost` when it listens on loopback), and the check that refuses any other Host (a DNS name
//! rebound to this machine) or any Origin but the server's own (a page on another site). The lab's server uses it;
//! the emulator's server will too.

use std::net::{IpAddr, SocketAddr};

/// `host:port` as a browser writes it in Host (IPv6 in brackets).
pub(crate) fn host_of(address: SocketAddr) -> String {
    match address.ip() {
        IpAddr::V6(ip) => format!("[{ip}]:{}", address.port()),
        IpAddr::V4(ip) => format!("{ip}:{}", address.port()),
    }
}

/// The Host values that name a server bound to `bound`: its address, and `localhost` when it listens on loopback.
pub(crate) fn allowed_hosts(bound: SocketAddr) -> Vec<String> {
    let mut hosts = vec![host_of(bound)];
    if bound.ip().is_loopback() {
        hosts.push(format!("localhost:{}", bound.port()));
    }
    hosts
}

/// Why a request was refused, with the message to send; the lab answers 421 to the first and 403 to the second.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The Host header (empty when missing or not text) names another server.
    ForeignHost(String),
    /// The Origin header names another site.
    ForeignOrigin(String),
}

/// Accepts a request whose Host is one of `allowed` (case aside) and whose Origin, when sent, is `http://` and one
/// of them. `host` and `origin` are the headers' values, `None` when absent (a header that is not text: `Some("")`).
pub(crate) fn check_host_origin(host: Option<&str>, origin: Option<&str>, allowed: &[String]) -> Result<(), Refusal> {
    let own = |value: &str| allowed.iter().any(|name| value.eq_ignore_ascii_case(name));
    let host = host.unwrap_or("");
    if !own(host) {
        let first = allowed.first().map_or("", String::as_str);
        return Err(Refusal::ForeignHost(format!(
            "Host {host:?} is not this server ({first}): open it by its own address"
        )));
    }
    let Some(origin) = origin else { return Ok(()) };
    let named = origin.get(..7).is_some_and(|scheme| scheme.eq_ignore_ascii_case("http://")) && own(&origin[7..]);
    if named {
        Ok(())
    } else {
        Err(Refusal::ForeignOrigin(format!("Origin {origin:?} is another site: this server answers only its own page")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loopback_server_answers_to_its_address_and_localhost_and_nothing_else() {
        let v4 = allowed_hosts("127.0.0.1:8080".parse().unwrap());
        assert_eq!(v4, ["127.0.0.1:8080", "localhost:8080"]);
        assert_eq!(allowed_hosts("[::1]:9".parse().unwrap()), ["[::1]:9", "localhost:9"]);
        assert_eq!(allowed_hosts("192.0.2.7:80".parse().unwrap()), ["192.0.2.7:80"], "not loopback: no localhost");
        for host in ["127.0.0.1:8080", "LOCALHOST:8080", "localhost:8080"] {
            assert_eq!(check_host_origin(Some(host), None, &v4), Ok(()), "{host}");
        }
        for host in [None, Some(""), Some("evil.example:8080"), Some("localhost:8081"), Some("127.0.0.1")] {
            assert!(matches!(check_host_origin(host, None, &v4), Err(Refusal::ForeignHost(_))), "{host:?}");
        }
    }

    #[test]
    fn an_origin_must_be_the_servers_own_page() {
        let hosts = allowed_hosts("127.0.0.1:8080".parse().unwrap());
        let host = Some("127.0.0.1:8080");
        for origin in ["http://127.0.0.1:8080", "HTTP://localhost:8080"] {
            assert_eq!(check_host_origin(host, Some(origin), &hosts), Ok(()), "{origin}");
        }
        for origin in ["null", "", "https://127.0.0.1:8080", "http://evil.example", "http://127.0.0.1:8081", "http:/"] {
            let refused = check_host_origin(host, Some(origin), &hosts);
            assert!(matches!(refused, Err(Refusal::ForeignOrigin(ref m)) if m.contains("another site")), "{origin}");
        }
    }
}
