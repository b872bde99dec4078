//! The Rust client of the Congestion Manager: [`CmClient`] talks to `concordd` over its Unix
//! socket, or to an [`EmbeddedCm`] in the same process, with one API.
//!
//! ```no_run
//! use concord_cc::cm::FlowKey;
//! use concord_net::client::CmClient;
//! use concord_net::protocol::Event;
//! use std::net::Ipv4Addr;
//!
//! # async fn run() -> Result<(), concord_net::client::ClientError> {
//! let cm = CmClient::connect(concord_net::daemon::default_socket_path()).await?;
//! let mut events = cm.events().ok_or(concord_net::client::ClientError::Disconnected)?;
//! let flow = cm.open(FlowKey::new(Ipv4Addr::LOCALHOST, 5004, 40_000)).await?;
//! flow.request(1500).await?;
//! while let Some(event) = events.next().await {
//!     if let Event::Grant { flow: f, bytes } = event {
//!         // send up to `bytes` on the flow's socket, then:
//!         if f == flow.id() {
//!             flow.notify(bytes).await?;
//!             break;
//!         }
//!     }
//! }
//! # Ok(())
//! # }
//! ```

use crate::hub::{ClientId, Hub, HubConfig};
use crate::protocol::{
    ClientMessage, DecodeError, ErrorCode, Event, FrameBuffer, MacroflowInfo, Reply, Request,
    ServerMessage, Status,
};
use concord_cc::cm::{
    CmConfigError, CmUpdate, FeedbackMode, FlowId, FlowKey, FlowTag, MacroflowId, QueryResult,
    ThreshHint,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::UnixStream;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// Why a call did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Connecting or writing failed.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    /// The connection is gone (the daemon exited or closed it).
    #[error("the congestion manager closed the connection")]
    Disconnected,
    /// The manager refused the request; nothing changed.
    #[error("refused ({code:?}): {message}")]
    Refused {
        /// Why.
        code: ErrorCode,
        /// The manager's sentence.
        message: String,
    },
    /// The reply does not fit the request (a peer speaking another protocol).
    #[error("unexpected reply {0:?}")]
    UnexpectedReply(Reply),
    /// An embedded client has no daemon to reconnect to.
    #[error("an embedded congestion manager has no socket to reconnect to")]
    Embedded,
    /// The socket is not this user's daemon's (another user's directory, socket or process).
    #[error("{0}")]
    Untrusted(crate::daemon::SocketError),
}

/// The first wait between two attempts of [`CmClient::connect_retrying`].
pub const RETRY_FIRST: std::time::Duration = std::time::Duration::from_millis(10);

/// The longest wait between two attempts of [`CmClient::connect_retrying`].
pub const RETRY_MAX: std::time::Duration = std::time::Duration::from_millis(200);

/// Events queued for a client that has not taken them yet, before further ones are dropped.
const EVENT_QUEUE: usize = 65_536;

/// The stream of events (grants, rate changes, expired grants) for every flow of one client.
#[derive(Debug)]
pub struct Events {
    /// Where they arrive.
    rx: mpsc::Receiver<Event>,
}

impl Events {
    /// The next event; `None` once the connection is gone.
    pub async fn next(&mut self) -> Option<Event> {
        self.rx.recv().await
    }

    /// The next event if one is waiting.
    pub fn try_next(&mut self) -> Option<Event> {
        self.rx.try_recv().ok()
    }
}

/// Replies awaited, by request id.
type Pending = Arc<Mutex<HashMap<u32, oneshot::Sender<Reply>>>>;

/// A connection to `concordd`.
#[derive(Debug)]
struct Remote {
    /// The daemon's socket, for [`CmClient::reconnect`].
    path: PathBuf,
    /// The next request id.
    next_id: AtomicU32,
    /// Replies awaited.
    pending: Pending,
    /// Set by the reader when the connection is gone, before it fails the replies awaited.
    closed: Arc<AtomicBool>,
    /// The socket's sending half.
    writer: tokio::sync::Mutex<OwnedWriteHalf>,
    /// The task that reads replies and events.
    reader: JoinHandle<()>,
}

impl Drop for Remote {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// An in-process client of an [`EmbeddedCm`].
#[derive(Debug)]
struct Local {
    /// The hub.
    hub: Arc<Hub>,
    /// This client's handle in it.
    id: ClientId,
}

impl Drop for Local {
    fn drop(&mut self) {
        self.hub.detach(self.id);
    }
}

/// Where a client's calls go.
#[derive(Debug)]
enum Backend {
    /// To a daemon over its socket.
    Remote(Remote),
    /// To a hub in this process.
    Local(Local),
}

/// The shared part of a client and its flows.
#[derive(Debug)]
struct Inner {
    /// Where calls go.
    backend: Backend,
    /// The event stream, until taken.
    events: Mutex<Option<Events>>,
    /// Events dropped because the stream was full (a client that does not read them).
    dropped: Arc<AtomicU64>,
}

/// A client of the Congestion Manager: a connection to `concordd`, or to an [`EmbeddedCm`].
/// Cheap to clone; the connection closes (and the manager closes its flows) when the last
/// clone and the last [`Flow`] are dropped.
#[derive(Clone, Debug)]
pub struct CmClient {
    /// The shared part.
    inner: Arc<Inner>,
}

/// An open flow: the handle of `cm_open`, with the calls that act on it.
#[derive(Clone, Debug)]
pub struct Flow {
    /// The manager's handle.
    id: FlowId,
    /// The key it was opened with.
    key: FlowKey,
    /// The client it belongs to.
    client: CmClient,
}

impl CmClient {
    /// Connects to the daemon listening on `path`, after checking that it is this user's
    /// daemon: the socket and its private directory belong to this user
    /// ([`crate::daemon::verify_socket`]), and so does the process that accepts
    /// (`SO_PEERCRED`). A socket another user set up is refused with
    /// [`ClientError::Untrusted`].
    pub async fn connect(path: impl AsRef<Path>) -> Result<CmClient, ClientError> {
        let path = path.as_ref().to_path_buf();
        if let Err(e) = crate::daemon::verify_socket(&path) {
            return Err(match e {
                crate::daemon::SocketError::Io { source, .. } => ClientError::Io(source),
                other => ClientError::Untrusted(other),
            });
        }
        let stream = UnixStream::connect(&path).await?;
        let uid = crate::daemon::current_uid()?;
        let peer = stream.peer_cred()?.uid();
        if peer != uid {
            return Err(ClientError::Untrusted(
                crate::daemon::SocketError::ForeignPeer { path, peer, uid },
            ));
        }
        let (rd, wr) = stream.into_split();
        let pending: Pending = Arc::default();
        let (tx, rx) = mpsc::channel(EVENT_QUEUE);
        let dropped = Arc::new(AtomicU64::new(0));
        let closed = Arc::new(AtomicBool::new(false));
        let reader = tokio::spawn(read_loop(
            rd,
            Arc::clone(&pending),
            Arc::clone(&closed),
            tx,
            Arc::clone(&dropped),
        ));
        Ok(CmClient {
            inner: Arc::new(Inner {
                backend: Backend::Remote(Remote {
                    path,
                    next_id: AtomicU32::new(1),
                    pending,
                    closed,
                    writer: tokio::sync::Mutex::new(wr),
                    reader,
                }),
                events: Mutex::new(Some(Events { rx })),
                dropped,
            }),
        })
    }

    /// Connects to the daemon on `path`, trying again while no daemon listens there (the
    /// socket is missing, refuses, or drops the connection before answering a `status` call: a
    /// daemon starting, dying or restarting) until `within` has passed; the waits between attempts grow from [`RETRY_FIRST`] to [`RETRY_MAX`]. Other
    /// errors, and the last one after `within`, are returned.
    pub async fn connect_retrying(
        path: impl AsRef<Path>,
        within: std::time::Duration,
    ) -> Result<CmClient, ClientError> {
        let path = path.as_ref();
        let deadline = tokio::time::Instant::now() + within;
        let mut wait = RETRY_FIRST;
        loop {
            // A daemon being killed may still take a connection into its listening socket's
            // backlog and then drop it: a connection counts once it has answered a call.
            let attempt = match CmClient::connect(path).await {
                Ok(c) => c.status().await.map(|_| c),
                Err(e) => Err(e),
            };
            let retry = match &attempt {
                Ok(_) => false,
                Err(ClientError::Disconnected) => true,
                Err(ClientError::Io(e)) => matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound
                        | std::io::ErrorKind::ConnectionRefused
                        | std::io::ErrorKind::ConnectionReset
                        | std::io::ErrorKind::BrokenPipe
                ),
                Err(_) => false,
            };
            if !retry || tokio::time::Instant::now() + wait >= deadline {
                return attempt;
            }
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(RETRY_MAX);
        }
    }

    /// True once the connection to the daemon is gone (the daemon exited, restarted or closed
    /// it): calls then fail with [`ClientError::Disconnected`] and the event stream ends.
    /// Always false for an embedded client.
    pub fn is_disconnected(&self) -> bool {
        match &self.inner.backend {
            Backend::Remote(r) => r.closed.load(Ordering::SeqCst),
            Backend::Local(_) => false,
        }
    }

    /// A new connection to the daemon this client connected to, as
    /// [`CmClient::connect_retrying`] makes it: for a client whose daemon restarted. The new
    /// client has its own event stream and no flows (a daemon that restarted has none): open
    /// them again, e.g. with [`Flow::reopen`]. This client is left as it is.
    pub async fn reconnect(&self, within: std::time::Duration) -> Result<CmClient, ClientError> {
        match &self.inner.backend {
            Backend::Remote(r) => CmClient::connect_retrying(&r.path, within).await,
            Backend::Local(_) => Err(ClientError::Embedded),
        }
    }

    /// The event stream of this client's flows. It can be taken once; later calls return
    /// `None`.
    pub fn events(&self) -> Option<Events> {
        self.inner
            .events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Events dropped because the stream was not read (remote clients only).
    pub fn events_dropped(&self) -> u64 {
        self.inner.dropped.load(Ordering::Relaxed)
    }

    /// `cm_open`: opens a flow with `key`.
    pub async fn open(&self, key: FlowKey) -> Result<Flow, ClientError> {
        match self.call(Request::Open(key)).await? {
            Reply::Opened(id) => Ok(Flow {
                id,
                key,
                client: self.clone(),
            }),
            other => Err(unexpected(other)),
        }
    }

    /// The receiving host's half of the probe protocol: one data packet of flow `tag` from
    /// host `from`, `bytes` long, `ce` if marked Congestion Experienced, arrived here.
    pub async fn received(
        &self,
        from: std::net::Ipv4Addr,
        tag: FlowTag,
        bytes: u64,
        ce: bool,
    ) -> Result<(), ClientError> {
        ok(self
            .call(Request::Received {
                from,
                tag,
                bytes,
                ce,
            })
            .await?)
    }

    /// Every macroflow that holds open flows (of any client): rate, window, RTT, aging and
    /// loss estimate, as `concord-cm status` shows them.
    pub async fn macroflows(&self) -> Result<Vec<MacroflowInfo>, ClientError> {
        let mut all: Vec<MacroflowInfo> = Vec::new();
        let mut start = 0u32;
        loop {
            match self.call(Request::Macroflows { start }).await? {
                Reply::Macroflows { more, list } => {
                    let next = list.last().map(|m| m.id.0.saturating_add(1));
                    all.extend(list);
                    match next {
                        Some(n) if more && n > start => start = n,
                        _ => return Ok(all),
                    }
                }
                other => return Err(unexpected(other)),
            }
        }
    }

    /// The manager's counters.
    pub async fn status(&self) -> Result<Status, ClientError> {
        match self.call(Request::Status).await? {
            Reply::Status(s) => Ok(s),
            other => Err(unexpected(other)),
        }
    }

    /// Sends one request and waits for its reply; an error reply becomes
    /// [`ClientError::Refused`].
    async fn call(&self, request: Request) -> Result<Reply, ClientError> {
        let reply = match &self.inner.backend {
            Backend::Local(l) => l.hub.handle(l.id, request),
            Backend::Remote(r) => {
                let id = r.next_id.fetch_add(1, Ordering::Relaxed);
                let (tx, rx) = oneshot::channel();
                r.pending
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(id, tx);
                // The reader sets `closed` before it fails the waiters: either it saw this
                // one, or this check sees `closed`.
                if r.closed.load(Ordering::SeqCst) {
                    r.pending
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .remove(&id);
                    return Err(ClientError::Disconnected);
                }
                let frame = ClientMessage { id, request }.encode();
                let written = r.writer.lock().await.write_all(&frame).await;
                if let Err(e) = written {
                    r.pending
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .remove(&id);
                    return Err(e.into());
                }
                rx.await.map_err(|_| ClientError::Disconnected)?
            }
        };
        match reply {
            Reply::Error { code, message } => Err(ClientError::Refused { code, message }),
            r => Ok(r),
        }
    }
}

/// The error for a reply of the wrong kind.
fn unexpected(r: Reply) -> ClientError {
    ClientError::UnexpectedReply(r)
}

/// Expects [`Reply::Ok`].
fn ok(r: Reply) -> Result<(), ClientError> {
    match r {
        Reply::Ok => Ok(()),
        other => Err(unexpected(other)),
    }
}

impl Flow {
    /// The manager's handle of the flow.
    pub fn id(&self) -> FlowId {
        self.id
    }

    /// The key the flow was opened with.
    pub fn key(&self) -> FlowKey {
        self.key
    }

    /// `cm_request`: the flow would like to send `nbytes` more bytes; grants arrive as
    /// [`Event::Grant`].
    pub async fn request(&self, nbytes: u64) -> Result<(), ClientError> {
        let flow = self.id;
        ok(self.client.call(Request::Request { flow, nbytes }).await?)
    }

    /// `cm_notify`: the flow sent `nsent` bytes on its oldest grant (0 if it did not use it).
    pub async fn notify(&self, nsent: u64) -> Result<(), ClientError> {
        let flow = self.id;
        ok(self.client.call(Request::Notify { flow, nsent }).await?)
    }

    /// `cm_update`: what the receiver reported.
    pub async fn update(&self, update: CmUpdate) -> Result<(), ClientError> {
        let flow = self.id;
        ok(self.client.call(Request::Update { flow, update }).await?)
    }

    /// `cm_query`: the flow's share of the rate, srtt and RTT variation, `None` until the
    /// manager has an estimate.
    pub async fn query(&self) -> Result<QueryResult, ClientError> {
        match self.client.call(Request::Query { flow: self.id }).await? {
            Reply::Query(q) => Ok(q),
            other => Err(unexpected(other)),
        }
    }

    /// `cm_thresh`: the factors beyond which the flow hears of rate and RTT changes.
    pub async fn thresh(&self, thresh: ThreshHint) -> Result<(), ClientError> {
        let flow = self.id;
        ok(self.client.call(Request::Thresh { flow, thresh }).await?)
    }

    /// `cm_getmacroflow`: the flow's macroflow.
    pub async fn macroflow(&self) -> Result<MacroflowId, ClientError> {
        match self
            .client
            .call(Request::GetMacroflow { flow: self.id })
            .await?
        {
            Reply::Macroflow(m) => Ok(m),
            other => Err(unexpected(other)),
        }
    }

    /// `cm_setmacroflow`: moves the flow into `target`, or a new macroflow if `None`; returns
    /// the macroflow it is in.
    pub async fn set_macroflow(
        &self,
        target: Option<MacroflowId>,
    ) -> Result<MacroflowId, ClientError> {
        let flow = self.id;
        match self
            .client
            .call(Request::SetMacroflow { flow, target })
            .await?
        {
            Reply::Macroflow(m) => Ok(m),
            other => Err(unexpected(other)),
        }
    }

    /// Where the flow's feedback comes from: [`FeedbackMode::Explicit`] has the daemon probe
    /// the receiving host's daemon instead of waiting for [`Flow::update`].
    pub async fn set_feedback(&self, mode: FeedbackMode) -> Result<(), ClientError> {
        let flow = self.id;
        ok(self
            .client
            .call(Request::SetFeedback { flow, mode })
            .await?)
    }

    /// Opens a flow with this flow's key on `client`: after [`CmClient::reconnect`], the same
    /// flow on the daemon that restarted. Its feedback mode, weight, thresholds and macroflow
    /// start afresh; set them again.
    pub async fn reopen(&self, client: &CmClient) -> Result<Flow, ClientError> {
        client.open(self.key).await
    }

    /// `cm_close`: closes the flow.
    pub async fn close(self) -> Result<(), ClientError> {
        ok(self.client.call(Request::Close { flow: self.id }).await?)
    }
}

/// Reads frames from the daemon: replies to their callers, events to the stream. Ends at end
/// of file, on a read error, a malformed frame or a fatal frame; the callers still waiting
/// then see [`ClientError::Disconnected`].
async fn read_loop(
    mut rd: OwnedReadHalf,
    pending: Pending,
    closed: Arc<AtomicBool>,
    events: mpsc::Sender<Event>,
    dropped: Arc<AtomicU64>,
) {
    let mut frames = FrameBuffer::new();
    let mut chunk = vec![0u8; 16 * 1024];
    'read: loop {
        let n = match rd.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        frames.extend(&chunk[..n]);
        loop {
            let msg = match frames.next_frame() {
                Ok(Some(body)) => ServerMessage::decode(&body),
                Ok(None) => break,
                Err(e) => Err::<ServerMessage, DecodeError>(e),
            };
            match msg {
                Ok(ServerMessage::Reply { id, reply }) => {
                    let waiter = pending
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .remove(&id);
                    if let Some(w) = waiter {
                        let _ = w.send(reply);
                    }
                }
                Ok(ServerMessage::Event(e)) => {
                    if events.try_send(e).is_err() {
                        dropped.fetch_add(1, Ordering::Relaxed);
                    }
                }
                Ok(ServerMessage::Fatal { code, message }) => {
                    tracing::warn!(
                        ?code,
                        message,
                        "the congestion manager closed the connection"
                    );
                    break 'read;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "malformed frame from the congestion manager");
                    break 'read;
                }
            }
        }
    }
    closed.store(true, Ordering::SeqCst);
    pending
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clear();
}

/// The Congestion Manager hosted in this process: the daemon's [`Hub`] without the socket.
/// Its clients have the same API as the daemon's ([`CmClient`], [`Flow`], [`Events`]).
/// Create it inside a tokio runtime; dropping it stops its timer.
#[derive(Debug)]
pub struct EmbeddedCm {
    /// The manager and its clients.
    hub: Arc<Hub>,
    /// The timer task.
    timer: JoinHandle<()>,
}

impl EmbeddedCm {
    /// A manager with `config`, its timer running on the current tokio runtime.
    pub fn new(config: HubConfig) -> Result<EmbeddedCm, CmConfigError> {
        let hub = Hub::new(config)?;
        let timer = tokio::spawn(Arc::clone(&hub).run_timer());
        Ok(EmbeddedCm { hub, timer })
    }

    /// A new client; its flows close when it and all its flows are dropped.
    pub fn client(&self) -> CmClient {
        let (id, rx) = self.hub.attach();
        CmClient {
            inner: Arc::new(Inner {
                backend: Backend::Local(Local {
                    hub: Arc::clone(&self.hub),
                    id,
                }),
                events: Mutex::new(Some(Events { rx })),
                dropped: Arc::new(AtomicU64::new(0)),
            }),
        }
    }

    /// The manager's counters.
    pub fn status(&self) -> Status {
        self.hub.status()
    }
}

impl Drop for EmbeddedCm {
    fn drop(&mut self) {
        self.timer.abort();
    }
}
