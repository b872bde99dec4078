//! The daemon's side of the local API: the owner-only Unix socket and one task per
//! connection, all sharing one [`Hub`].

use crate::hub::{ClientId, Hub};
use crate::protocol::{ClientMessage, ErrorCode, Event, FrameBuffer, ServerMessage};
use std::collections::HashMap;
use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::io::AsyncWriteExt;
use tokio::net::unix::OwnedWriteHalf;
use tokio::net::{UnixListener, UnixStream};

/// The environment variable that names the socket when no path is given.
pub const SOCKET_ENV: &str = "CONCORD_CM_SOCKET";

/// Why the socket could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SocketError {
    /// A file system call failed.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// On which path.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The socket's directory is not private to the daemon's user.
    #[error(
        "{path} must be a directory owned by uid {uid} with no group or other access (chmod 700)"
    )]
    UnsafeDirectory {
        /// The directory.
        path: PathBuf,
        /// The daemon's user.
        uid: u32,
    },
    /// The path has no parent directory.
    #[error("{0} has no parent directory")]
    NoDirectory(PathBuf),
    /// Something other than a socket is at the path.
    #[error("{0} exists and is not a socket; remove it or choose another path")]
    NotASocket(PathBuf),
    /// Another daemon answers on the path.
    #[error("a daemon is already listening on {0}")]
    InUse(PathBuf),
    /// The socket is not this user's daemon's: a client refuses to connect.
    #[error(
        "refusing to connect to {path}: {why}. Another user may be posing as concordd; \
         start concordd yourself, or set XDG_RUNTIME_DIR or CONCORD_CM_SOCKET to a private path"
    )]
    Untrusted {
        /// The socket.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// The process on the other end of the socket runs as another user.
    #[error(
        "refusing {path}: the process listening there runs as uid {peer}, not as you (uid {uid})"
    )]
    ForeignPeer {
        /// The socket.
        path: PathBuf,
        /// The peer's user.
        peer: u32,
        /// This process's user.
        uid: u32,
    },
}

/// The socket path used when none is given, the systemd way: `$CONCORD_CM_SOCKET`, else
/// `$XDG_RUNTIME_DIR/concord/cm.sock`, else `/run/user/UID/concord/cm.sock` when the user's
/// runtime directory exists (logind creates it, owned by the user, mode 0700: no one else can
/// squat it), else for root `/run/concord/cm.sock`, else `/tmp/concord-UID/cm.sock`, a directory
/// the daemon creates with mode 0700 and the clients check ([`verify_socket`]).
pub fn default_socket_path() -> PathBuf {
    if let Some(p) = std::env::var_os(SOCKET_ENV).filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR").filter(|p| !p.is_empty()) {
        return Path::new(&dir).join("concord").join("cm.sock");
    }
    let uid = own_uid().unwrap_or(0);
    let run_user = PathBuf::from(format!("/run/user/{uid}"));
    if fs::symlink_metadata(&run_user).is_ok_and(|m| m.is_dir() && m.uid() == uid) {
        return run_user.join("concord").join("cm.sock");
    }
    if uid == 0 {
        return PathBuf::from("/run/concord/cm.sock");
    }
    PathBuf::from(format!("/tmp/concord-{uid}/cm.sock"))
}

/// Checks, before a client connects, that `path` is this user's daemon's socket: its directory
/// is a directory (not a symbolic link) owned by this user with no group or other access, and
/// the path is a socket owned by this user. Another user who created the directory or the
/// socket first (a squatter posing as the daemon) is refused.
pub fn verify_socket(path: &Path) -> Result<(), SocketError> {
    let uid = own_uid().map_err(|source| SocketError::Io {
        what: "reading the user of",
        path: PathBuf::from("/proc/self"),
        source,
    })?;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let untrusted = |why: String| SocketError::Untrusted {
        path: path.to_path_buf(),
        why,
    };
    let meta = fs::symlink_metadata(dir).map_err(|source| SocketError::Io {
        what: "inspecting",
        path: dir.to_path_buf(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(untrusted(format!("{} is not a directory", dir.display())));
    }
    if meta.uid() != uid {
        return Err(untrusted(format!(
            "its directory {} belongs to uid {}, not to you (uid {uid})",
            dir.display(),
            meta.uid()
        )));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(untrusted(format!(
            "its directory {} has mode {:o}; it must be 700",
            dir.display(),
            meta.mode() & 0o777
        )));
    }
    let sock = fs::symlink_metadata(path).map_err(|source| SocketError::Io {
        what: "inspecting",
        path: path.to_path_buf(),
        source,
    })?;
    if !sock.file_type().is_socket() {
        return Err(untrusted("it is not a socket".into()));
    }
    if sock.uid() != uid {
        return Err(untrusted(format!(
            "it belongs to uid {}, not to you (uid {uid})",
            sock.uid()
        )));
    }
    Ok(())
}

/// The user id of this process, for the checks of [`verify_socket`] and the peer credentials.
pub fn current_uid() -> io::Result<u32> {
    own_uid()
}

/// The daemon's user id: the owner of its own /proc entry.
fn own_uid() -> io::Result<u32> {
    Ok(fs::metadata("/proc/self")?.uid())
}

/// Creates `path`'s directory with mode 0700 if missing, checks that it is private to this
/// user, replaces a stale socket left by a dead daemon, and binds a listener with mode 0600.
pub fn bind_socket(path: &Path) -> Result<UnixListener, SocketError> {
    let io_err = |what, p: &Path| {
        let path = p.to_path_buf();
        move |source| SocketError::Io { what, path, source }
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .ok_or_else(|| SocketError::NoDirectory(path.to_path_buf()))?;
    if fs::symlink_metadata(dir).is_err() {
        fs::create_dir_all(dir).map_err(io_err("creating", dir))?;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
            .map_err(io_err("restricting", dir))?;
    }
    let uid = own_uid().map_err(io_err("reading the user of", Path::new("/proc/self")))?;
    let meta = fs::symlink_metadata(dir).map_err(io_err("inspecting", dir))?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(SocketError::UnsafeDirectory {
            path: dir.to_path_buf(),
            uid,
        });
    }
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_socket() => {
            if std::os::unix::net::UnixStream::connect(path).is_ok() {
                return Err(SocketError::InUse(path.to_path_buf()));
            }
            fs::remove_file(path).map_err(io_err("removing the stale socket", path))?;
            tracing::info!(path = %path.display(), "removed a stale socket");
        }
        Ok(_) => return Err(SocketError::NotASocket(path.to_path_buf())),
        Err(_) => {}
    }
    let listener = UnixListener::bind(path).map_err(io_err("binding", path))?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o600))
        .map_err(io_err("restricting", path))?;
    Ok(listener)
}

/// The bounds the daemon puts on its clients.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Connections open at once, all users together.
    pub max_connections: usize,
    /// Connections open at once per user (by the peer credentials, `SO_PEERCRED`).
    pub max_per_uid: usize,
    /// A connection that holds no flow and sends nothing for this long is closed.
    pub idle_timeout: std::time::Duration,
    /// A frame begun and not finished within this long closes its connection (a client that
    /// sends a header and stalls holds a task and a buffer).
    pub frame_timeout: std::time::Duration,
    /// At a limit, when every connection holds flows, the one silent the longest is closed to
    /// make room if it has sent nothing for at least this long; a connection in use is never
    /// closed.
    pub evict_silent_after: std::time::Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 4096,
            max_per_uid: 4096,
            idle_timeout: std::time::Duration::from_secs(60),
            frame_timeout: std::time::Duration::from_secs(10),
            evict_silent_after: std::time::Duration::from_secs(5),
        }
    }
}

/// One open connection, as the acceptor sees it.
#[derive(Debug)]
struct Conn {
    /// The peer's user.
    uid: u32,
    /// The hub's handle of the client, once attached.
    client: ClientId,
    /// When it last sent a byte, in milliseconds since the daemon started.
    last_active: Arc<std::sync::atomic::AtomicU64>,
    /// Tells its task to close it.
    evict: Arc<tokio::sync::Notify>,
}

/// The open connections.
#[derive(Debug, Default)]
struct Conns {
    /// By connection number.
    open: HashMap<u64, Conn>,
    /// The next connection number.
    next: u64,
    /// Connections open per user.
    of_uid: HashMap<u32, usize>,
    /// Connections open at the last trim tick.
    at_trim: usize,
    /// Trim ticks still to hand memory back ([`Conns::trim_tick`]).
    trims_due: u8,
}

impl Conns {
    /// One trim tick: whether memory is to be handed back now. It is when connections fell
    /// since the last tick, and once more on the tick after: a closing connection's task leaves
    /// the table before its future, buffers and the hub's flows are freed, so the first trim
    /// may come before the last of that memory is free.
    fn trim_tick(&mut self) -> bool {
        let open = self.open.len();
        if open < self.at_trim {
            self.trims_due = 2;
        }
        self.at_trim = open;
        let due = self.trims_due > 0;
        self.trims_due = self.trims_due.saturating_sub(1);
        due
    }

    /// Counts one connection of `uid` fewer.
    fn forget(&mut self, uid: u32) {
        if let Some(k) = self.of_uid.get_mut(&uid) {
            *k -= 1;
            if *k == 0 {
                self.of_uid.remove(&uid);
            }
        }
    }

    /// Removes connection `number` if it is still registered.
    fn remove(&mut self, number: u64) {
        if let Some(x) = self.open.remove(&number) {
            self.forget(x.uid);
        }
    }
}

/// Accepts connections forever, each served by its own task on `hub`, with the default
/// [`Limits`].
pub async fn serve(hub: Arc<Hub>, listener: UnixListener) {
    serve_with(hub, listener, Limits::default()).await;
}

/// Milliseconds since `start`.
fn millis_since(start: tokio::time::Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Accepts connections forever within `limits`. A connection from another user than the
/// daemon's (or root) is closed at once. When a limit is reached, a connection (of the same
/// user, for the per-user limit) is closed to make room, least recently used first ([`victim`]);
/// if none may be, the new connection gets a `fatal` frame (code 17, unavailable) and is
/// closed. Memory freed by closed connections is handed back to the system.
pub async fn serve_with(hub: Arc<Hub>, listener: UnixListener, limits: Limits) {
    let own = own_uid().unwrap_or(0);
    let conns: Arc<Mutex<Conns>> = Arc::default();
    let start = tokio::time::Instant::now();
    let mut trim = tokio::time::interval(std::time::Duration::from_secs(2));
    trim.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = trim.tick() => {
                trim_memory(&hub, &conns);
                continue;
            }
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!(error = %e, "accept failed");
                // Out of descriptors, most likely: let some connections end first.
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let uid = match stream.peer_cred() {
            Ok(c) => c.uid(),
            Err(e) => {
                tracing::warn!(error = %e, "no peer credentials: connection closed");
                continue;
            }
        };
        if uid != own && uid != 0 {
            tracing::warn!(uid, "connection from another user closed");
            continue;
        }
        let now = millis_since(start);
        let admitted = admit(&hub, &conns, uid, &limits, now);
        let Some((number, last_active, evict)) = admitted else {
            tracing::warn!(uid, "connection limit reached: new connection refused");
            let mut stream = stream;
            let refusal = ServerMessage::Fatal {
                code: ErrorCode::Unavailable,
                message: "too many connections: close some, or open flows on fewer".into(),
            };
            tokio::spawn(async move {
                let _ = tokio::time::timeout(
                    std::time::Duration::from_secs(1),
                    stream.write_all(&refusal.encode()),
                )
                .await;
            });
            continue;
        };
        let hub = Arc::clone(&hub);
        let conns = Arc::clone(&conns);
        tokio::spawn(async move {
            let (client, events) = hub.attach();
            if let Some(c) = lock(&conns).open.get_mut(&number) {
                c.client = client;
            }
            let watch = Watch {
                last_active,
                evict,
                start,
                limits,
            };
            serve_attached(&hub, client, events, stream, &watch).await;
            lock(&conns).remove(number);
        });
    }
}

/// The connection table, whatever a panicking holder left.
fn lock(conns: &Mutex<Conns>) -> std::sync::MutexGuard<'_, Conns> {
    conns
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Registers a connection of `uid` if the limits allow, closing another to make room if one
/// must go ([`victim`]); `None` if none can.
fn admit(
    hub: &Hub,
    conns: &Mutex<Conns>,
    uid: u32,
    limits: &Limits,
    now: u64,
) -> Option<(
    u64,
    Arc<std::sync::atomic::AtomicU64>,
    Arc<tokio::sync::Notify>,
)> {
    let mut c = lock(conns);
    let full_uid = c.of_uid.get(&uid).copied().unwrap_or(0) >= limits.max_per_uid.max(1);
    let full = c.open.len() >= limits.max_connections.max(1);
    if full || full_uid {
        let n = victim(hub, &c, full_uid.then_some(uid), limits, now)?;
        if let Some(v) = c.open.remove(&n) {
            c.forget(v.uid);
            v.evict.notify_one();
        }
    }
    let number = c.next;
    c.next += 1;
    let last_active = Arc::new(std::sync::atomic::AtomicU64::new(now));
    let evict = Arc::new(tokio::sync::Notify::new());
    c.open.insert(
        number,
        Conn {
            uid,
            client: ClientId(u64::MAX),
            last_active: Arc::clone(&last_active),
            evict: Arc::clone(&evict),
        },
    );
    *c.of_uid.entry(uid).or_insert(0) += 1;
    Some((number, last_active, evict))
}

/// The connection to close to make room (of user `uid` if given), least recently used first:
/// the one silent the longest among those with no flow open; if every one holds flows, the one
/// silent the longest, provided it has sent nothing for [`Limits::evict_silent_after`]. A
/// connection that holds flows and has not spoken for that long is most likely one an
/// application leaked (a flow in use sends requests, notifies or updates every round trip);
/// its client hears why in a `fatal` frame and may connect again. A connection in use is never
/// closed: then the new connection is refused.
fn victim(hub: &Hub, c: &Conns, uid: Option<u32>, limits: &Limits, now: u64) -> Option<u64> {
    let silent = |x: &Conn| x.last_active.load(std::sync::atomic::Ordering::Relaxed);
    let candidates = || {
        c.open
            .iter()
            .filter(|(_, x)| uid.is_none_or(|u| x.uid == u))
    };
    let clients: Vec<ClientId> = candidates().map(|(_, x)| x.client).collect();
    let flows = hub.flows_of_each(&clients);
    let mut flowless: Option<(u64, u64)> = None;
    let mut any: Option<(u64, u64)> = None;
    for ((n, x), f) in candidates().zip(flows) {
        let at = silent(x);
        if f == 0 && flowless.is_none_or(|(t, _)| at < t) {
            flowless = Some((at, *n));
        }
        if any.is_none_or(|(t, _)| at < t) {
            any = Some((at, *n));
        }
    }
    let after = u64::try_from(limits.evict_silent_after.as_millis()).unwrap_or(u64::MAX);
    flowless
        .or(any.filter(|(t, _)| now.saturating_sub(*t) >= after))
        .map(|(_, n)| n)
}

/// Hands memory back to the system once connections have gone: the hub's tables shrink, and
/// the allocator returns its free pages (`malloc_trim`).
fn trim_memory(hub: &Hub, conns: &Mutex<Conns>) {
    let mut c = lock(conns);
    if c.trim_tick() {
        c.open.shrink_to_fit();
        hub.shrink_to_fit();
        crate::sys::release_free_memory();
    }
}

/// What a connection's task watches besides its socket.
#[derive(Debug)]
struct Watch {
    /// When it last sent a byte, in milliseconds since `start`.
    last_active: Arc<std::sync::atomic::AtomicU64>,
    /// Set by the acceptor to close it.
    evict: Arc<tokio::sync::Notify>,
    /// When the daemon started.
    start: tokio::time::Instant,
    /// The timeouts.
    limits: Limits,
}

/// Size of one read from a client, in bytes.
const READ_CHUNK: usize = 16 * 1024;

/// Most events written in one batch, so that replies are not held back for long.
const EVENT_BATCH: usize = 256;

/// Serves one client until it disconnects or sends a malformed frame; then closes its flows.
/// No limits or timeouts apply (see [`serve_with`]).
pub async fn serve_connection(hub: Arc<Hub>, stream: UnixStream) {
    let (client, events) = hub.attach();
    let watch = Watch {
        last_active: Arc::default(),
        evict: Arc::default(),
        start: tokio::time::Instant::now(),
        limits: Limits {
            idle_timeout: std::time::Duration::MAX,
            frame_timeout: std::time::Duration::MAX,
            ..Limits::default()
        },
    };
    serve_attached(&hub, client, events, stream, &watch).await;
}

/// Serves the attached `client` on `stream` until it disconnects, sends a malformed frame,
/// stalls inside a frame, idles without flows or is evicted; then detaches it.
async fn serve_attached(
    hub: &Hub,
    client: ClientId,
    mut events: tokio::sync::mpsc::Receiver<Event>,
    stream: UnixStream,
    watch: &Watch,
) {
    tracing::debug!(client = client.0, "client connected");
    let (rd, mut wr) = stream.into_split();
    let mut frames = FrameBuffer::new();
    let mut out = Vec::new();
    let mut frame_started: Option<tokio::time::Instant> = None;
    let mut last_read = tokio::time::Instant::now();
    let why = loop {
        let deadline = match frame_started {
            Some(t) => t.checked_add(watch.limits.frame_timeout),
            None if hub.flows_of(client) == 0 => last_read.checked_add(watch.limits.idle_timeout),
            None => None,
        };
        let sleep = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            ready = rd.readable() => {
                if let Err(e) = ready {
                    break format!("read error: {e}");
                }
                match read_into(&rd, &mut frames) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                    Ok(0) if frames.pending() > 0 => {
                        // The stream ended inside a frame: a truncated frame.
                        hub.count_malformed();
                        break format!("end of file inside a frame ({} bytes)", frames.pending());
                    }
                    Ok(0) => break "end of file".to_string(),
                    Ok(_) => {}
                    Err(e) => break format!("read error: {e}"),
                }
                last_read = tokio::time::Instant::now();
                watch.last_active.store(
                    millis_since(watch.start),
                    std::sync::atomic::Ordering::Relaxed,
                );
                match answer(hub, client, &mut frames, &mut out) {
                    Ok(()) => {
                        if let Err(e) = wr.write_all(&out).await {
                            break format!("write error: {e}");
                        }
                    }
                    Err(fatal) => {
                        // Replies to the frames before the bad one go first.
                        let _ = wr.write_all(&out).await;
                        let _ = wr.write_all(&fatal.encode()).await;
                        let _ = wr.shutdown().await;
                        break "malformed frame".to_string();
                    }
                }
                frame_started = match (frames.pending() > 0, frame_started) {
                    (false, _) => None,
                    (true, Some(t)) => Some(t),
                    (true, None) => Some(last_read),
                };
                out.clear();
                if out.capacity() > READ_CHUNK {
                    out.shrink_to(READ_CHUNK);
                }
            }
            event = events.recv() => {
                let Some(event) = event else { break "hub closed".to_string() };
                if let Err(e) = write_events(&mut wr, event, &mut events, &mut out).await {
                    break format!("write error: {e}");
                }
                out.clear();
            }
            () = sleep => {
                let (code, why) = if frame_started.is_some() {
                    hub.count_malformed();
                    (ErrorCode::Malformed, "a frame was not finished in time")
                } else {
                    (ErrorCode::Unavailable, "idle with no flow open")
                };
                let fatal = ServerMessage::Fatal { code, message: why.into() };
                let _ = tokio::time::timeout(
                    std::time::Duration::from_secs(1),
                    wr.write_all(&fatal.encode()),
                )
                .await;
                break why.to_string();
            }
            () = watch.evict.notified() => {
                let fatal = ServerMessage::Fatal {
                    code: ErrorCode::Unavailable,
                    message: "closed to make room for a new connection: the connection silent the longest"
                        .into(),
                };
                let _ = tokio::time::timeout(
                    std::time::Duration::from_secs(1),
                    wr.write_all(&fatal.encode()),
                )
                .await;
                break "evicted".to_string();
            }
        }
    };
    hub.detach(client);
    tracing::debug!(client = client.0, why, "client disconnected");
}

thread_local! {
    /// The buffer a worker thread reads into, shared by every connection it serves: an idle
    /// connection holds no read buffer of its own.
    static READ_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Reads what `rd` has ready (without waiting) into the worker thread's buffer and appends it to
/// `frames`; the byte count, 0 at end of file.
fn read_into(rd: &tokio::net::unix::OwnedReadHalf, frames: &mut FrameBuffer) -> io::Result<usize> {
    READ_BUFFER.with(|b| {
        let mut chunk = b.borrow_mut();
        if chunk.len() < READ_CHUNK {
            chunk.resize(READ_CHUNK, 0);
        }
        let n = rd.try_read(&mut chunk)?;
        frames.extend(&chunk[..n]);
        Ok(n)
    })
}

/// Answers every whole frame in `frames` into `out`, or returns the fatal frame for the first
/// malformed one (counted in the hub).
fn answer(
    hub: &Hub,
    client: ClientId,
    frames: &mut FrameBuffer,
    out: &mut Vec<u8>,
) -> Result<(), ServerMessage> {
    loop {
        let body = match frames.next_body() {
            Ok(Some(b)) => b,
            Ok(None) => return Ok(()),
            Err(e) => return Err(malformed(hub, client, &e)),
        };
        let msg = ClientMessage::decode(body).map_err(|e| malformed(hub, client, &e))?;
        let reply = hub.handle(client, msg.request);
        ServerMessage::Reply { id: msg.id, reply }.encode_into(out);
    }
}

/// Counts a malformed frame and builds the fatal frame that ends the connection.
fn malformed(hub: &Hub, client: ClientId, e: &dyn std::fmt::Display) -> ServerMessage {
    hub.count_malformed();
    tracing::info!(client = client.0, error = %e, "malformed frame: closing the connection");
    ServerMessage::Fatal {
        code: ErrorCode::Malformed,
        message: e.to_string(),
    }
}

/// Writes `first` and whatever other events are queued, up to [`EVENT_BATCH`], in one write.
async fn write_events(
    wr: &mut OwnedWriteHalf,
    first: Event,
    events: &mut tokio::sync::mpsc::Receiver<Event>,
    out: &mut Vec<u8>,
) -> io::Result<()> {
    ServerMessage::Event(first).encode_into(out);
    for _ in 1..EVENT_BATCH {
        match events.try_recv() {
            Ok(e) => ServerMessage::Event(e).encode_into(out),
            Err(_) => break,
        }
    }
    wr.write_all(out).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn() -> Conn {
        Conn {
            uid: 0,
            client: ClientId(0),
            last_active: Arc::default(),
            evict: Arc::default(),
        }
    }

    /// A burst of connections closes: memory is handed back on that tick and the next, then
    /// no more until connections fall again.
    #[test]
    fn memory_is_trimmed_on_the_tick_after_a_fall_too() {
        let mut c = Conns::default();
        for n in 0..100 {
            c.open.insert(n, conn());
        }
        assert!(!c.trim_tick(), "rising: no trim");
        for n in 1..100 {
            c.remove(n);
        }
        assert!(c.trim_tick(), "the tick that sees the fall");
        assert!(c.trim_tick(), "and the one after it");
        assert!(!c.trim_tick());
        assert!(!c.trim_tick());
        c.remove(0);
        assert!(c.trim_tick());
        assert!(c.trim_tick());
        assert!(!c.trim_tick());
    }
}
