//! The emulator's HTTP/1.1, small and on tokio's TCP: the client sends one request at a time on a kept-alive
//! connection and reads the answer's status, its Retry-After and whether its body says the failure is temporary;
//! the built-in server reads request heads and writes answers. Heads are parsed by httparse; everything is bounded
//! (a head of [`MAX_HEAD`] bytes, a body of [`MAX_BODY`]), and nothing is ever sent twice behind the caller's back.

use std::io::{self, ErrorKind};
use std::net::SocketAddr;
use std::time::{Duration, SystemTime};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The longest request or answer head read.
pub(crate) const MAX_HEAD: usize = 16 * 1024;
/// The longest answer body read.
pub(crate) const MAX_BODY: usize = 64 * 1024;
/// Headers read from one head.
const MAX_HEADERS: usize = 64;

/// An answer as the client's classifier sees it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    /// Retry-After in wall time: `retry-after-ms` when sent (the built-in server's precise hint), else the
    /// standard header as delta-seconds or an HTTP-date.
    pub(crate) retry_after: Option<Duration>,
    /// gRPC's pushback in wall time: `x-retrylab-pushback-ms` when sent (the built-in server's precise hint),
    /// else `grpc-retry-pushback-ms` as gRFC A6 writes it (whole milliseconds; a negative or unreadable value
    /// says not to retry).
    pub(crate) pushback: Option<WallPushback>,
    /// The body says the failure is temporary ("temporarily unavailable", "try again").
    pub(crate) transient_body: bool,
}

/// A gRPC pushback as the wire carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WallPushback {
    Wait(Duration),
    Stop,
}

/// The hint headers of an answer: Retry-After, gRPC's pushback, or both (the server model's `hint_header`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HintHeaders {
    pub(crate) retry_after: bool,
    pub(crate) pushback: bool,
}

impl HintHeaders {
    pub(crate) const NONE: HintHeaders = HintHeaders { retry_after: false, pushback: false };
    pub(crate) const RETRY_AFTER: HintHeaders = HintHeaders { retry_after: true, pushback: false };
}

/// Why an exchange ended without an answer.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The peer reset the connection, or closed it before a whole answer: no status, as a reset.
    Reset,
    /// The answer broke HTTP/1.1, or was longer than the bounds.
    Malformed(String),
    /// Any other socket error.
    Io(io::Error),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Reset => write!(f, "the connection was reset or closed before a whole answer"),
            Failure::Malformed(why) => write!(f, "{why}"),
            Failure::Io(error) => write!(f, "{error}"),
        }
    }
}

impl From<io::Error> for Failure {
    fn from(error: io::Error) -> Self {
        match error.kind() {
            ErrorKind::ConnectionReset
            | ErrorKind::ConnectionAborted
            | ErrorKind::BrokenPipe
            | ErrorKind::UnexpectedEof => Failure::Reset,
            _ => Failure::Io(error),
        }
    }
}

/// A client connection: its stream and the bytes read past the last answer.
pub(crate) struct Conn {
    stream: TcpStream,
    buffer: Vec<u8>,
    /// False once an answer was delimited by the connection's close, or the server asked to close.
    reusable: bool,
}

impl Conn {
    /// Connects to `address`, an address already checked by the caller (never a name to look up).
    pub(crate) async fn open(address: SocketAddr) -> io::Result<Conn> {
        let stream = TcpStream::connect(address).await?;
        stream.set_nodelay(true)?;
        Ok(Conn { stream, buffer: Vec::with_capacity(1024), reusable: true })
    }

    /// Whether another request may be sent on this connection.
    pub(crate) fn reusable(&self) -> bool {
        self.reusable
    }

    /// Sends `request` (a whole head) and reads its answer.
    pub(crate) async fn exchange(&mut self, request: &[u8]) -> Result<Answer, Failure> {
        self.stream.write_all(request).await?;
        let (head_len, head) = loop {
            if let Some(parsed) = parse_answer_head(&self.buffer)? {
                break parsed;
            }
            if self.buffer.len() >= MAX_HEAD {
                return Err(Failure::Malformed(format!("an answer head longer than {MAX_HEAD} bytes")));
            }
            if self.fill().await? == 0 {
                return Err(Failure::Reset);
            }
        };
        self.buffer.drain(..head_len);
        self.reusable &= !head.close;
        let body = match head.framing {
            Framing::Empty => Vec::new(),
            Framing::Length(length) => self.take(length).await?,
            Framing::Chunked => self.chunked().await?,
            Framing::UntilClose => {
                self.reusable = false;
                while self.buffer.len() <= MAX_BODY && self.fill().await? > 0 {}
                std::mem::take(&mut self.buffer)
            }
        };
        let transient_body = says_transient(&body);
        Ok(Answer { status: head.status, retry_after: head.retry_after, pushback: head.pushback, transient_body })
    }

    /// Reads more bytes into the buffer; 0 at the end of the stream.
    async fn fill(&mut self) -> Result<usize, Failure> {
        Ok(read_more(&mut self.stream, &mut self.buffer).await?)
    }

    /// The next `length` bytes of the stream.
    async fn take(&mut self, length: usize) -> Result<Vec<u8>, Failure> {
        if length > MAX_BODY {
            return Err(Failure::Malformed(format!("a body of {length} bytes, more than {MAX_BODY}")));
        }
        while self.buffer.len() < length {
            if self.fill().await? == 0 {
                return Err(Failure::Reset);
            }
        }
        Ok(self.buffer.drain(..length).collect())
    }

    /// The next line, without its CRLF.
    async fn line(&mut self) -> Result<Vec<u8>, Failure> {
        loop {
            if let Some(end) = self.buffer.windows(2).position(|pair| pair == b"\r\n") {
                let line = self.buffer.drain(..end + 2).take(end).collect();
                return Ok(line);
            }
            if self.buffer.len() > MAX_HEAD {
                return Err(Failure::Malformed("a chunk line without its end".into()));
            }
            if self.fill().await? == 0 {
                return Err(Failure::Reset);
            }
        }
    }

    /// A chunked body (RFC 9112 §7.1), trailers skipped.
    async fn chunked(&mut self) -> Result<Vec<u8>, Failure> {
        let mut body = Vec::new();
        loop {
            let line = self.line().await?;
            let size_text = line.split(|&byte| byte == b';').next().unwrap_or(&[]);
            let size = std::str::from_utf8(size_text)
                .ok()
                .and_then(|text| usize::from_str_radix(text.trim(), 16).ok())
                .ok_or_else(|| Failure::Malformed("a chunk size that is not hexadecimal".into()))?;
            if size == 0 {
                while !self.line().await?.is_empty() {}
                return Ok(body);
            }
            if body.len() + size > MAX_BODY {
                return Err(Failure::Malformed(format!("a chunked body longer than {MAX_BODY} bytes")));
            }
            body.extend(self.take(size).await?);
            if !self.line().await?.is_empty() {
                return Err(Failure::Malformed("a chunk longer than its size".into()));
            }
        }
    }
}

/// How an answer's body ends.
#[derive(Debug, PartialEq)]
enum Framing {
    Empty,
    Length(usize),
    Chunked,
    UntilClose,
}

#[derive(Debug, PartialEq)]
struct AnswerHead {
    status: u16,
    retry_after: Option<Duration>,
    pushback: Option<WallPushback>,
    framing: Framing,
    close: bool,
}

/// An answer head at the start of `bytes` and its length, `None` while incomplete.
fn parse_answer_head(bytes: &[u8]) -> Result<Option<(usize, AnswerHead)>, Failure> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    let length = match response.parse(bytes) {
        Ok(httparse::Status::Complete(length)) => length,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(error) => return Err(Failure::Malformed(format!("an answer head that is not HTTP/1.1: {error}"))),
    };
    let status = response.code.unwrap_or(0);
    let value = |name: &str| {
        response
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .and_then(|h| std::str::from_utf8(h.value).ok())
    };
    let precise = value("retry-after-ms").and_then(|ms| ms.trim().parse::<f64>().ok()).filter(|ms| *ms >= 0.0);
    let retry_after = match precise {
        Some(ms) => Some(Duration::from_secs_f64(ms / 1e3)),
        None => value("retry-after").and_then(|text| retry_after(text, SystemTime::now())),
    };
    let pushback = match (value("x-retrylab-pushback-ms"), value("grpc-retry-pushback-ms")) {
        (Some(precise), _) => Some(precise.trim().parse::<f64>().ok().filter(|ms| *ms >= 0.0 && ms.is_finite())),
        (None, Some(whole)) => Some(whole.trim().parse::<i32>().ok().filter(|ms| *ms >= 0).map(f64::from)),
        (None, None) => None,
    }
    .map(|ms| ms.map_or(WallPushback::Stop, |ms| WallPushback::Wait(Duration::from_secs_f64(ms / 1e3))));
    let chunked = value("transfer-encoding").is_some_and(|te| te.to_ascii_lowercase().contains("chunked"));
    let framing = if (100..200).contains(&status) || status == 204 || status == 304 {
        Framing::Empty
    } else if chunked {
        Framing::Chunked
    } else if let Some(text) = value("content-length") {
        let length = text.trim().parse().map_err(|_| Failure::Malformed(format!("Content-Length {text:?}")))?;
        if length == 0 { Framing::Empty } else { Framing::Length(length) }
    } else {
        Framing::UntilClose
    };
    let close = value("connection").is_some_and(|c| c.eq_ignore_ascii_case("close"));
    Ok(Some((length, AnswerHead { status, retry_after, pushback, framing, close })))
}

/// A Retry-After value (RFC 9110 §10.2.3): delta-seconds, or an HTTP-date counted from `now` (a date past is 0).
pub(crate) fn retry_after(text: &str, now: SystemTime) -> Option<Duration> {
    let text = text.trim();
    if let Ok(seconds) = text.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let date = httpdate::parse_http_date(text).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Whether a body says its failure is temporary: the server model's disguised 400 says "upstream temporarily
/// unavailable"; "try again" is the other common wording.
fn says_transient(body: &[u8]) -> bool {
    let text = String::from_utf8_lossy(body).to_ascii_lowercase();
    text.contains("temporarily unavailable") || text.contains("try again")
}

/// A request head as the built-in server needs it.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct RequestHead {
    pub(crate) host: Option<String>,
    pub(crate) origin: Option<String>,
    /// The emulator's own headers: which request and attempt this is, and when the client sent it (ns since the
    /// emulation's start).
    pub(crate) request: Option<u64>,
    pub(crate) attempt: Option<u32>,
    pub(crate) sent_ns: Option<u64>,
    body_length: usize,
}

/// The next request head on `stream`, `None` when the peer closed between requests. Any body is read and dropped.
pub(crate) async fn read_request(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> io::Result<Option<RequestHead>> {
    loop {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut request = httparse::Request::new(&mut headers);
        match request.parse(buffer) {
            Ok(httparse::Status::Complete(length)) => {
                let value = |name: &str| {
                    request
                        .headers
                        .iter()
                        .find(|h| h.name.eq_ignore_ascii_case(name))
                        .map(|h| String::from_utf8_lossy(h.value).into_owned())
                };
                let number = |name: &str| value(name).and_then(|text| text.trim().parse::<u64>().ok());
                let head = RequestHead {
                    host: value("host"),
                    origin: value("origin"),
                    request: number("x-retrylab-request"),
                    attempt: number("x-retrylab-attempt").and_then(|n| u32::try_from(n).ok()),
                    sent_ns: number("x-retrylab-sent-ns"),
                    body_length: number("content-length").unwrap_or(0) as usize,
                };
                buffer.drain(..length);
                if head.body_length > MAX_BODY {
                    return Err(io::Error::new(ErrorKind::InvalidData, "request body too long"));
                }
                while buffer.len() < head.body_length {
                    if read_more(stream, buffer).await? == 0 {
                        return Ok(None);
                    }
                }
                buffer.drain(..head.body_length);
                return Ok(Some(head));
            }
            Ok(httparse::Status::Partial) if buffer.len() < MAX_HEAD => {}
            Ok(httparse::Status::Partial) | Err(_) => {
                return Err(io::Error::new(ErrorKind::InvalidData, "not an HTTP/1.1 request head"));
            }
        }
        if read_more(stream, buffer).await? == 0 {
            return Ok(None);
        }
    }
}

/// Reads what `stream` has (up to 4 KiB) onto the end of `buffer`; 0 at the end of the stream.
async fn read_more(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> io::Result<usize> {
    let mut chunk = [0u8; 4096];
    let read = stream.read(&mut chunk).await?;
    buffer.extend_from_slice(&chunk[..read]);
    Ok(read)
}

/// An answer: status, an optional hint in the headers `headers` names (a Retry-After is sent both in whole
/// seconds, rounded up, and in exact ms as `retry-after-ms`; a pushback in whole ms, rounded up, as gRFC A6's
/// `grpc-retry-pushback-ms`, and in exact ms as `x-retrylab-pushback-ms`), and a short text body.
pub(crate) fn answer_bytes(status: u16, hint: Option<Duration>, headers: HintHeaders, body: &str) -> Vec<u8> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        421 => "Misdirected Request",
        403 => "Forbidden",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "",
    };
    let mut head =
        format!("HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\n", body.len());
    if let Some(hint) = hint.filter(|_| headers.retry_after) {
        let seconds = hint.as_nanos().div_ceil(1_000_000_000);
        head.push_str(&format!("retry-after: {seconds}\r\nretry-after-ms: {:.3}\r\n", hint.as_secs_f64() * 1e3));
    }
    if let Some(hint) = hint.filter(|_| headers.pushback) {
        let whole = hint.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128);
        let precise = hint.as_secs_f64() * 1e3;
        head.push_str(&format!("grpc-retry-pushback-ms: {whole}\r\nx-retrylab-pushback-ms: {precise:.3}\r\n"));
    }
    head.push_str("\r\n");
    head.push_str(body);
    head.into_bytes()
}

/// A request head for attempt `attempt` of request `request`, to `host` (as the Host header writes it) at `path`.
pub(crate) fn request_bytes(host: &str, path: &str, request: u64, attempt: u32, sent_ns: u64) -> Vec<u8> {
    format!(
        "GET {path} HTTP/1.1\r\nhost: {host}\r\nuser-agent: retrylab-emulate/{}\r\nx-retrylab-request: {request}\r\n\
         x-retrylab-attempt: {attempt}\r\nx-retrylab-sent-ns: {sent_ns}\r\n\r\n",
        env!("CARGO_PKG_VERSION")
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(text: &str) -> AnswerHead {
        parse_answer_head(text.as_bytes()).unwrap().unwrap().1
    }

    #[test]
    fn an_answer_head_gives_status_hint_and_framing() {
        let parsed = head("HTTP/1.1 503 x\r\nRetry-After: 2\r\nContent-Length: 5\r\n\r\nhello");
        assert_eq!(
            parsed,
            AnswerHead {
                status: 503,
                retry_after: Some(Duration::from_secs(2)),
                pushback: None,
                framing: Framing::Length(5),
                close: false
            }
        );
        let precise = head("HTTP/1.1 429 x\r\nretry-after: 1\r\nretry-after-ms: 12.5\r\ncontent-length: 0\r\n\r\n");
        assert_eq!((precise.retry_after, precise.framing), (Some(Duration::from_micros(12_500)), Framing::Empty));
        assert_eq!(head("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n").framing, Framing::Chunked);
        let until_close = head("HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n");
        assert_eq!((until_close.framing, until_close.close), (Framing::UntilClose, true));
        assert_eq!(head("HTTP/1.1 204 No Content\r\n\r\n").framing, Framing::Empty);
        assert!(parse_answer_head(b"HTTP/1.1 200 OK\r\ncontent-le").unwrap().is_none(), "incomplete");
        assert!(matches!(parse_answer_head(b"SSH-2.0\r\n\r\n"), Err(Failure::Malformed(_))));
        assert!(matches!(
            parse_answer_head(b"HTTP/1.1 200 OK\r\ncontent-length: x\r\n\r\n"),
            Err(Failure::Malformed(_))
        ));
    }

    #[test]
    fn a_pushback_is_read_as_grfc_a6_writes_it_and_a_negative_or_unreadable_one_says_stop() {
        let pushback_of = |value: &str| {
            head(&format!("HTTP/1.1 503 x\r\ngrpc-retry-pushback-ms: {value}\r\ncontent-length: 0\r\n\r\n")).pushback
        };
        assert_eq!(pushback_of("250"), Some(WallPushback::Wait(Duration::from_millis(250))));
        assert_eq!(pushback_of(" 0 "), Some(WallPushback::Wait(Duration::ZERO)));
        for stop in ["-1", "soon", "1.5", "99999999999"] {
            assert_eq!(pushback_of(stop), Some(WallPushback::Stop), "{stop:?}");
        }
        let parsed = head("HTTP/1.1 503 x\r\ngrpc-retry-pushback-ms: 2\r\nx-retrylab-pushback-ms: 1.250\r\n\r\n");
        assert_eq!(parsed.pushback, Some(WallPushback::Wait(Duration::from_micros(1_250))));
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let now = httpdate::parse_http_date("Wed, 21 Oct 2026 07:28:00 GMT").unwrap();
        assert_eq!(retry_after(" 120 ", now), Some(Duration::from_secs(120)));
        assert_eq!(retry_after("Wed, 21 Oct 2026 07:28:30 GMT", now), Some(Duration::from_secs(30)));
        assert_eq!(retry_after("Wed, 21 Oct 2026 07:27:00 GMT", now), Some(Duration::ZERO), "a date past");
        assert_eq!(retry_after("soon", now), None);
        assert_eq!(retry_after("-3", now), None);
    }

    #[test]
    fn an_answer_written_is_read_back_with_its_hint() {
        let hint = Some(Duration::from_micros(1_500));
        let bytes = answer_bytes(503, hint, HintHeaders::RETRY_AFTER, "upstream temporarily unavailable");
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(text.contains("retry-after: 1\r\n") && text.contains("retry-after-ms: 1.500\r\n"), "{text}");
        assert!(!text.contains("pushback"), "{text}");
        let (length, parsed) = parse_answer_head(&bytes).unwrap().unwrap();
        assert_eq!((parsed.retry_after, parsed.pushback), (Some(Duration::from_micros(1_500)), None));
        let both = HintHeaders { retry_after: true, pushback: true };
        let text = String::from_utf8(answer_bytes(503, hint, both, "")).unwrap();
        assert!(text.contains("grpc-retry-pushback-ms: 2\r\nx-retrylab-pushback-ms: 1.500\r\n"), "{text}");
        let pushback_only = HintHeaders { retry_after: false, pushback: true };
        let (_, parsed) = parse_answer_head(&answer_bytes(429, hint, pushback_only, "")).unwrap().unwrap();
        assert_eq!(
            (parsed.retry_after, parsed.pushback),
            (None, Some(WallPushback::Wait(Duration::from_micros(1_500))))
        );
        assert!(says_transient(&bytes[length..]));
        assert!(!says_transient(b"no such user"));
        assert!(says_transient(b"Please TRY AGAIN later"));
        for (status, reason) in [
            (200, "OK"),
            (400, "Bad Request"),
            (403, "Forbidden"),
            (421, "Misdirected Request"),
            (422, "Unprocessable Content"),
            (429, "Too Many Requests"),
            (502, "Bad Gateway"),
            (503, "Service Unavailable"),
        ] {
            let line = format!("HTTP/1.1 {status} {reason}\r\n");
            assert!(answer_bytes(status, None, HintHeaders::NONE, "").starts_with(line.as_bytes()), "{line}");
        }
    }

    /// Serves one connection on 127.0.0.1 with `serve` and runs `client` against it; a failed assertion on either
    /// side fails the test.
    fn against<S, F, C, G>(serve: S, client: C)
    where
        S: FnOnce(TcpStream) -> F + Send + 'static,
        F: std::future::Future<Output = ()> + Send + 'static,
        C: FnOnce(SocketAddr) -> G,
        G: std::future::Future<Output = ()>,
    {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build().unwrap();
        runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let address = listener.local_addr().unwrap();
            let server = tokio::spawn(async move {
                let (stream, _) = listener.accept().await.unwrap();
                serve(stream).await;
            });
            client(address).await;
            server.await.expect("the server side's assertions hold");
        });
    }

    /// Reads one request head off `stream`, answering nothing.
    async fn read_head(stream: &mut TcpStream) {
        let mut buffer = Vec::new();
        assert!(read_request(stream, &mut buffer).await.unwrap().is_some());
    }

    #[test]
    fn a_kept_alive_connection_carries_answers_of_every_framing_one_after_another() {
        against(
            |mut stream| async move {
                // Inside the bounds: a 4 KiB header and a body of exactly the longest length read.
                let long = format!(
                    "HTTP/1.1 200 OK\r\nx-long: {}\r\ncontent-length: {MAX_BODY}\r\n\r\n{}",
                    "h".repeat(4096),
                    "b".repeat(MAX_BODY)
                );
                let answers: [&[u8]; 4] = [
                    long.as_bytes(),
                    b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok",
                    b"HTTP/1.1 400 Bad\r\ntransfer-encoding: chunked\r\n\r\n9;x=1\r\ntry again\r\n0\r\nt: 1\r\nu: 2\r\n\r\n",
                    b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok",
                ];
                for answer in answers {
                    read_head(&mut stream).await;
                    stream.write_all(answer).await.unwrap();
                }
                // A body that ends with the connection, sent after its head has been read.
                read_head(&mut stream).await;
                stream.write_all(b"HTTP/1.1 503 Busy\r\nretry-after: 3\r\n\r\n").await.unwrap();
                for piece in [&b"please try "[..], b"again later"] {
                    tokio::time::sleep(Duration::from_millis(30)).await;
                    stream.write_all(piece).await.unwrap();
                }
            },
            |address| async move {
                let mut conn = Conn::open(address).await.unwrap();
                let request = request_bytes("h", "/", 1, 1, 0);
                assert_eq!(conn.exchange(&request).await.unwrap().status, 200, "a long head and body");
                let ok = conn.exchange(&request).await.unwrap();
                assert_eq!((ok.status, ok.transient_body, conn.reusable()), (200, false, true));
                let chunked = conn.exchange(&request).await.unwrap();
                assert_eq!((chunked.status, chunked.transient_body, conn.reusable()), (400, true, true));
                let closing = conn.exchange(&request).await.unwrap();
                assert_eq!((closing.status, conn.reusable()), (200, false), "the server said it closes");
                let last = conn.exchange(&request).await.unwrap();
                assert_eq!(
                    (last.status, last.retry_after, last.transient_body, conn.reusable()),
                    (503, Some(Duration::from_secs(3)), true, false)
                );
            },
        );
    }

    #[test]
    fn a_reset_or_a_half_answer_is_a_reset_and_a_broken_one_malformed() {
        let cases = [
            ("reset", "Reset"),
            ("half", "Reset"),
            ("garbage", "Malformed"),
            ("huge", "Malformed"),
            ("too long", "Malformed"),
        ];
        for (how, expected) in cases {
            against(
                move |mut stream| async move {
                    read_head(&mut stream).await;
                    match how {
                        "reset" => stream.set_zero_linger().unwrap(),
                        "half" => stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc").await.unwrap(),
                        "garbage" => stream.write_all(b"NOT HTTP AT ALL\r\n\r\n").await.unwrap(),
                        "too long" => {
                            let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", MAX_BODY + 1);
                            stream.write_all(head.as_bytes()).await.unwrap();
                        }
                        _ => {
                            let endless = format!("HTTP/1.1 200 OK\r\nx: {}", "a".repeat(MAX_HEAD + 10));
                            stream.write_all(endless.as_bytes()).await.unwrap_or(());
                        }
                    }
                },
                move |address| async move {
                    let mut conn = Conn::open(address).await.unwrap();
                    let failure = conn.exchange(&request_bytes("h", "/", 1, 1, 0)).await.unwrap_err();
                    assert!(format!("{failure:?}").starts_with(expected), "{how}: {failure:?}");
                    let said = failure.to_string();
                    match how {
                        "reset" | "half" => assert!(said.contains("reset or closed"), "{said}"),
                        "garbage" => assert!(said.contains("not HTTP/1.1"), "{said}"),
                        "too long" => assert!(said.contains("a body of 65537 bytes"), "{said}"),
                        _ => assert!(said.contains("longer than 16384 bytes"), "{said}"),
                    }
                },
            );
        }
    }

    #[test]
    fn a_request_head_carries_the_emulators_numbers_and_its_body_is_skipped() {
        against(
            |mut stream| async move {
                let mut buffer = Vec::new();
                let head = read_request(&mut stream, &mut buffer).await.unwrap().unwrap();
                assert_eq!(head.host.as_deref(), Some("127.0.0.1:9"));
                assert_eq!((head.request, head.attempt, head.sent_ns), (Some(7), Some(3), Some(42)));
                let second = read_request(&mut stream, &mut buffer).await.unwrap().unwrap();
                assert_eq!((second.request, second.origin.as_deref()), (None, Some("http://x")));
                assert!(read_request(&mut stream, &mut buffer).await.unwrap().is_none(), "closed between requests");
            },
            |address| async move {
                let mut stream = TcpStream::connect(address).await.unwrap();
                stream.write_all(&request_bytes("127.0.0.1:9", "/w", 7, 3, 42)).await.unwrap();
                stream
                    .write_all(b"POST / HTTP/1.1\r\norigin: http://x\r\ncontent-length: 4\r\n\r\nbody")
                    .await
                    .unwrap();
                drop(stream);
                tokio::time::sleep(Duration::from_millis(50)).await;
            },
        );
    }

    #[test]
    fn chunked_answers_are_read_across_reads_and_held_to_the_bounds() {
        let big = format!("{:x}", MAX_BODY);
        for (case, expected) in
            [("split", Ok(200)), ("exact", Ok(200)), ("over", Err("longer than")), ("endless", Err("without its end"))]
        {
            let big = big.clone();
            against(
                move |mut stream| async move {
                    read_head(&mut stream).await;
                    stream.write_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n").await.unwrap();
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    let rest = match case {
                        "split" => "3\r\nabc\r\n0\r\n\r\n".to_owned(),
                        "exact" => format!("{big}\r\n{}\r\n0\r\n\r\n", "x".repeat(MAX_BODY)),
                        "over" => format!("{big}\r\n{}\r\n1\r\nx\r\n0\r\n\r\n", "x".repeat(MAX_BODY)),
                        _ => "7".repeat(MAX_HEAD + 10),
                    };
                    stream.write_all(rest.as_bytes()).await.unwrap_or(());
                    tokio::time::sleep(Duration::from_millis(20)).await;
                },
                move |address| async move {
                    let mut conn = Conn::open(address).await.unwrap();
                    let result = conn.exchange(&request_bytes("h", "/", 1, 1, 0)).await;
                    match (expected, result) {
                        (Ok(status), Ok(answer)) => assert_eq!(answer.status, status, "{case}"),
                        (Err(why), Err(failure)) => assert!(failure.to_string().contains(why), "{case}: {failure}"),
                        (_, other) => panic!("{case}: {other:?}"),
                    }
                },
            );
        }
    }

    #[test]
    fn a_request_head_or_body_past_the_bounds_is_refused() {
        for (case, text) in [
            ("head", format!("GET / HTTP/1.1\r\nx: {}", "a".repeat(MAX_HEAD + 10))),
            ("body", format!("POST / HTTP/1.1\r\ncontent-length: {}\r\n\r\n", MAX_BODY + 1)),
            ("exact body", format!("POST / HTTP/1.1\r\ncontent-length: {MAX_BODY}\r\n\r\n{}", "b".repeat(MAX_BODY))),
        ] {
            against(
                move |mut stream| async move {
                    let mut buffer = Vec::new();
                    let read = read_request(&mut stream, &mut buffer).await;
                    match case {
                        "exact body" => assert!(read.unwrap().is_some(), "{case}"),
                        _ => assert_eq!(read.unwrap_err().kind(), ErrorKind::InvalidData, "{case}"),
                    }
                },
                move |address| async move {
                    let mut stream = TcpStream::connect(address).await.unwrap();
                    stream.write_all(text.as_bytes()).await.unwrap_or(());
                    tokio::time::sleep(Duration::from_millis(20)).await;
                },
            );
        }
    }
}
