//! A leaf: what "this machine only" means for a server of ours. The Host values a server answers to (its own
//! address, and `localhost` when it listens on loopback), and the check that refuses any other Host (a DNS name
//! rebound to this machine) or any Origin but the server's own (a page on another site), which the lab's server and
//! the emulator's use; and where `retrylab emulate --target` may send load, decided from the URL's text alone,
//! before any socket or name lookup.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};

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

/// Where `--target` sends its requests: the address to connect to, the Host header and the path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Target {
    pub(crate) address: SocketAddr,
    pub(crate) host: String,
    pub(crate) path: String,
}

/// Reads `url` (`http://HOST[:PORT][/PATH]`). Without `allow_remote` the host must be an IP literal on loopback
/// (127.0.0.0/8, ::1, or IPv4-mapped ::ffff:127.x) or the name `localhost`, taken as 127.0.0.1 without a lookup;
/// anything else is refused before a socket exists. With it, any address, and a name is looked up.
pub(crate) fn parse_target(url: &str, allow_remote: bool) -> Result<Target, String> {
    let scheme_end =
        url.find("://").ok_or_else(|| format!("{url:?} is not a URL; write http://127.0.0.1:8080/path"))?;
    let scheme = &url[..scheme_end];
    if !scheme.eq_ignore_ascii_case("http") {
        return Err(format!("scheme {scheme:?} is not supported: the emulator speaks plain http:// (HTTP/1.1)"));
    }
    let rest = &url[scheme_end + 3..];
    let rest = rest.split('#').next().unwrap_or("");
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let path = if path.is_empty() {
        "/".to_owned()
    } else if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_owned()
    };
    if authority.contains('@') {
        return Err("a user name or password in the URL is not supported".into());
    }
    if path.bytes().any(|byte| byte.is_ascii_whitespace() || byte.is_ascii_control()) {
        return Err("the path has spaces or control characters; percent-encode them".into());
    }
    let (host, port) = split_host_port(authority)?;
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    let ip = if host.eq_ignore_ascii_case("localhost") {
        Some(IpAddr::V4(Ipv4Addr::LOCALHOST))
    } else {
        literal.parse::<IpAddr>().ok().map(|ip| ip.to_canonical())
    };
    let address = match ip {
        Some(ip) if ip.is_loopback() || allow_remote => SocketAddr::new(ip, port),
        Some(ip) => {
            return Err(format!(
                "{ip} is not a loopback address: load goes to this machine only (127.0.0.0/8, ::1, localhost) \
                 unless --allow-remote is given"
            ));
        }
        None if allow_remote => (host, port)
            .to_socket_addrs()
            .map_err(|error| format!("cannot look up {host:?}: {error}"))?
            .next()
            .ok_or_else(|| format!("{host:?} has no address"))?,
        None => {
            return Err(format!(
                "{host:?} is a name, not a loopback address: load goes to this machine only (127.0.0.1, [::1], \
                 localhost) unless --allow-remote is given; no name is looked up without it"
            ));
        }
    };
    Ok(Target { address, host: authority.to_owned(), path })
}

/// `host[:port]` or `[v6][:port]`; the port defaults to 80.
fn split_host_port(authority: &str) -> Result<(&str, u16), String> {
    let (host, port) = match authority.strip_prefix('[') {
        Some(bracketed) => {
            let close = bracketed.find(']').ok_or("an IPv6 address without its closing ]")?;
            let after = &bracketed[close + 1..];
            let port = match after.strip_prefix(':') {
                Some(port) => Some(port),
                None if after.is_empty() => None,
                None => return Err(format!("unexpected {after:?} after the IPv6 address")),
            };
            (&authority[..close + 2], port)
        }
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    if host.is_empty() || host == "[]" {
        return Err("the URL names no host".into());
    }
    let port = match port {
        None | Some("") => 80,
        Some(text) => text
            .parse::<u16>()
            .ok()
            .filter(|&port| port > 0)
            .ok_or_else(|| format!("port {text:?} is not 1 to 65535"))?,
    };
    Ok((host, port))
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

    #[test]
    fn a_target_on_loopback_is_taken_and_anything_else_refused_without_a_lookup() {
        let cases = [
            ("http://127.0.0.1:8080/work?x=1", "127.0.0.1:8080", "127.0.0.1:8080", "/work?x=1"),
            ("HTTP://127.0.0.2", "127.0.0.2:80", "127.0.0.2", "/"),
            ("http://[::1]:9/", "[::1]:9", "[::1]:9", "/"),
            ("http://[::ffff:127.0.0.1]:81", "127.0.0.1:81", "[::ffff:127.0.0.1]:81", "/"),
            ("http://LocalHost:7000?q#frag", "127.0.0.1:7000", "LocalHost:7000", "/?q"),
        ];
        for (url, address, host, path) in cases {
            let target = parse_target(url, false).unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!(target, Target { address: address.parse().unwrap(), host: host.into(), path: path.into() });
        }
        let refused = [
            ("http://0.0.0.0:80", "not a loopback"),
            ("http://192.0.2.1/", "not a loopback"),
            ("http://[2001:db8::1]:80", "not a loopback"),
            ("http://[::ffff:192.0.2.1]", "not a loopback"),
            ("http://example.invalid/", "is a name"),
            ("http://localhost.example.invalid/", "is a name"),
            ("https://127.0.0.1/", "not supported"),
            ("http://user:pw@127.0.0.1/", "user name"),
            ("127.0.0.1:80", "not a URL"),
            ("http://127.0.0.1:0/", "1 to 65535"),
            ("http://127.0.0.1:99999/", "1 to 65535"),
            ("http://[::1/", "closing ]"),
            ("http://[::1]x:80/", "after the IPv6 address"),
            ("http://127.1:8080/", "is a name"),
            ("http:///path", "no host"),
            ("http://127.0.0.1/a b", "spaces"),
        ];
        for (url, why) in refused {
            let error = parse_target(url, false).expect_err(url);
            assert!(error.contains(why), "{url}: {error}");
        }
        let remote = parse_target("http://192.0.2.1:8080/x", true).unwrap();
        assert_eq!(remote.address, "192.0.2.1:8080".parse().unwrap(), "a literal needs no lookup even when allowed");
        // With --allow-remote a name is looked up; "127.1" is one the resolver reads as a number, with no query.
        let named = parse_target("http://127.1:8080/", true).unwrap();
        assert_eq!((named.address, named.host.as_str()), ("127.0.0.1:8080".parse().unwrap(), "127.1:8080"));
    }
}
