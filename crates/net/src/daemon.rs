//! The daemon's side of the local API: the owner-only Unix socket and one task per
//! connection, all sharing one [`Hub`].

use crate::hub::{ClientId, Hub};
use crate::protocol::{ClientMessage, ErrorCode, Event, FrameBuffer, ServerMessage};
use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
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
}

/// The socket path used when none is given: `$CONCORD_CM_SOCKET`, else
/// `$XDG_RUNTIME_DIR/concord/cm.sock`, else `/tmp/concord-<uid>/cm.sock`.
pub fn default_socket_path() -> PathBuf {
    if let Some(p) = std::env::var_os(SOCKET_ENV).filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR").filter(|p| !p.is_empty()) {
        return Path::new(&dir).join("concord").join("cm.sock");
    }
    let uid = own_uid().unwrap_or(0);
    PathBuf::from(format!("/tmp/concord-{uid}/cm.sock"))
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

/// Accepts connections forever, each served by its own task on `hub`.
pub async fn serve(hub: Arc<Hub>, listener: UnixListener) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let hub = Arc::clone(&hub);
                tokio::spawn(async move { serve_connection(hub, stream).await });
            }
            Err(e) => {
                tracing::warn!(error = %e, "accept failed");
                // Out of descriptors, most likely: let some connections end first.
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        }
    }
}

/// Size of one read from a client, in bytes.
const READ_CHUNK: usize = 16 * 1024;

/// Most events written in one batch, so that replies are not held back for long.
const EVENT_BATCH: usize = 256;

/// Serves one client until it disconnects or sends a malformed frame; then closes its flows.
pub async fn serve_connection(hub: Arc<Hub>, stream: UnixStream) {
    let (client, mut events) = hub.attach();
    tracing::debug!(client = client.0, "client connected");
    let (mut rd, mut wr) = stream.into_split();
    let mut frames = FrameBuffer::new();
    let mut chunk = vec![0u8; READ_CHUNK];
    let mut out = Vec::with_capacity(READ_CHUNK);
    let why = loop {
        tokio::select! {
            read = rd.read(&mut chunk) => {
                let n = match read {
                    Ok(0) if frames.pending() > 0 => {
                        // The stream ended inside a frame: a truncated frame.
                        hub.count_malformed();
                        break format!("end of file inside a frame ({} bytes)", frames.pending());
                    }
                    Ok(0) => break "end of file".to_string(),
                    Ok(n) => n,
                    Err(e) => break format!("read error: {e}"),
                };
                frames.extend(&chunk[..n]);
                match answer(&hub, client, &mut frames, &mut out) {
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
                out.clear();
            }
            event = events.recv() => {
                let Some(event) = event else { break "hub closed".to_string() };
                if let Err(e) = write_events(&mut wr, event, &mut events, &mut out).await {
                    break format!("write error: {e}");
                }
                out.clear();
            }
        }
    };
    hub.detach(client);
    tracing::debug!(client = client.0, why, "client disconnected");
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
        let body = match frames.next_frame() {
            Ok(Some(b)) => b,
            Ok(None) => return Ok(()),
            Err(e) => return Err(malformed(hub, client, &e)),
        };
        let msg = ClientMessage::decode(&body).map_err(|e| malformed(hub, client, &e))?;
        let reply = hub.handle(client, msg.request);
        out.extend_from_slice(&ServerMessage::Reply { id: msg.id, reply }.encode());
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
    out.extend_from_slice(&ServerMessage::Event(first).encode());
    for _ in 1..EVENT_BATCH {
        match events.try_recv() {
            Ok(e) => out.extend_from_slice(&ServerMessage::Event(e).encode()),
            Err(_) => break,
        }
    }
    wr.write_all(out).await
}
