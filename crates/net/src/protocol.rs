//! The local API of `concordd`: length-prefixed binary frames over a Unix stream socket.
//!
//! docs/cm-protocol.md is the reference for the byte layout; this module is its one
//! implementation in Rust. Every frame is
//!
//! ```text
//! length: u32 big-endian   bytes that follow, 2..=MAX_FRAME
//! version: u8              VERSION
//! kind: u8                 what the payload is
//! payload                  fixed layout per kind, integers big-endian
//! ```
//!
//! A client sends [`Request`]s, each with a request id it chooses; the daemon answers each
//! with one [`Reply`] carrying the same id, and pushes [`Event`]s (grants, rate changes,
//! expired grants) whenever the manager has them. A frame the daemon cannot decode is counted
//! and dropped, answered with a [`ServerMessage::Fatal`] frame, and the connection is closed.
//!
//! Units on the wire: sizes in bytes, rates in bits per second, durations in nanoseconds.

use concord_cc::cm::{
    CmUpdate, FeedbackMode, FlowId, FlowKey, FlowTag, LossMode, MacroflowId, QueryResult,
    ThreshHint,
};
use concord_cc::{Duration, Rate};
use std::net::Ipv4Addr;

/// The protocol version this implementation speaks, the first byte of every frame body.
pub const VERSION: u8 = 1;

/// The largest frame body accepted, in bytes (the length prefix excluded).
pub const MAX_FRAME: usize = 1024;

/// The length of the length prefix, in bytes.
pub const PREFIX_LEN: usize = 4;

/// The longest error message carried by an error frame, in bytes of UTF-8.
pub const MAX_MESSAGE: usize = 512;

/// Why bytes did not decode into a message; decoding never panics.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The body is shorter than its kind requires.
    #[error("truncated: {kind} needs {needed} bytes, the frame has {have}")]
    Truncated {
        /// The message kind being decoded ("header" before the kind is known).
        kind: &'static str,
        /// Bytes needed, in bytes.
        needed: usize,
        /// Bytes present, in bytes.
        have: usize,
    },
    /// Bytes are left after the message.
    #[error("{0} bytes after the end of the message")]
    TrailingBytes(usize),
    /// The version byte is not [`VERSION`].
    #[error("unsupported protocol version {0} (this side speaks {VERSION})")]
    UnsupportedVersion(u8),
    /// The kind byte names no message of this direction.
    #[error("unknown message kind 0x{0:02x}")]
    UnknownKind(u8),
    /// A length prefix beyond [`MAX_FRAME`] or below the header's 2 bytes.
    #[error("frame length {0} is outside 2..={MAX_FRAME}")]
    BadLength(u32),
    /// A loss mode byte outside 0..=3.
    #[error("unknown loss mode {0}")]
    BadLossMode(u8),
    /// A presence flag that is neither 0 nor 1, or a flags byte with unknown bits.
    #[error("bad flag byte 0x{0:02x}")]
    BadFlag(u8),
    /// An error message that is not UTF-8 or longer than [`MAX_MESSAGE`].
    #[error("bad error message: {0}")]
    BadMessage(&'static str),
}

/// A client's call, one per frame. Each is answered with one [`Reply`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Request {
    /// `cm_open`: opens a flow with this key; answered with [`Reply::Opened`].
    Open(FlowKey),
    /// `cm_request`: the flow would like to send `nbytes` more bytes; grants follow as
    /// [`Event::Grant`].
    Request {
        /// The flow.
        flow: FlowId,
        /// Bytes wanted.
        nbytes: u64,
    },
    /// `cm_notify`: the flow sent `nsent` bytes on its oldest grant (0: unused).
    Notify {
        /// The flow.
        flow: FlowId,
        /// Bytes sent.
        nsent: u64,
    },
    /// `cm_update`: feedback from the flow's receiver.
    Update {
        /// The flow.
        flow: FlowId,
        /// The feedback.
        update: CmUpdate,
    },
    /// `cm_query`: answered with [`Reply::Query`].
    Query {
        /// The flow.
        flow: FlowId,
    },
    /// `cm_close`.
    Close {
        /// The flow.
        flow: FlowId,
    },
    /// `cm_setmacroflow`: into `target`, or a new macroflow if `None`; answered with
    /// [`Reply::Macroflow`].
    SetMacroflow {
        /// The flow.
        flow: FlowId,
        /// The macroflow to join, or `None` for a new one.
        target: Option<MacroflowId>,
    },
    /// `cm_getmacroflow`: answered with [`Reply::Macroflow`].
    GetMacroflow {
        /// The flow.
        flow: FlowId,
    },
    /// `cm_thresh`: when the flow hears of rate changes.
    Thresh {
        /// The flow.
        flow: FlowId,
        /// The factors.
        thresh: ThreshHint,
    },
    /// The daemon's counters; answered with [`Reply::Status`].
    Status,
    /// Receiver side of the probe protocol: one data packet of flow `tag` from host `from`
    /// arrived at this host's application, which reports it so that this host's daemon can
    /// answer the sender's probes with it.
    Received {
        /// The sending host.
        from: Ipv4Addr,
        /// The flow as the receiver names it.
        tag: FlowTag,
        /// Bytes of the packet.
        bytes: u64,
        /// The packet was marked Congestion Experienced.
        ce: bool,
    },
    /// The macroflows whose handle is at least `start`, a page at a time; answered with
    /// [`Reply::Macroflows`].
    Macroflows {
        /// The first macroflow handle wanted.
        start: u32,
    },
    /// Where the flow's feedback comes from: the application's updates (implicit) or probes
    /// of the receiving host's daemon (explicit).
    SetFeedback {
        /// The flow.
        flow: FlowId,
        /// The mode.
        mode: FeedbackMode,
    },
}

/// Why the daemon refused a request; the request changed nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// The flow is not open, or not open on this connection.
    UnknownFlow,
    /// No macroflow has this handle.
    UnknownMacroflow,
    /// A flow with this key is open already.
    DuplicateFlow,
    /// A weight or hint out of range.
    InvalidWeight,
    /// A `cm_thresh` factor out of range.
    InvalidThresh,
    /// The manager's handle space is spent.
    OutOfHandles,
    /// This connection holds as many flows as the daemon allows one client.
    TooManyFlows,
    /// A `notify` or `update` that cannot be true: more bytes acknowledged than were sent,
    /// an RTT outside (0, 60 s], a packet larger than 65,535 bytes. It changed nothing.
    InvalidReport,
    /// The frame did not decode (sent in [`ServerMessage::Fatal`]).
    Malformed,
    /// The daemon is shutting down or cannot serve.
    Unavailable,
    /// A code this side does not know (a newer peer).
    Other(u8),
}

impl ErrorCode {
    /// The code's byte on the wire.
    pub fn to_byte(self) -> u8 {
        match self {
            ErrorCode::UnknownFlow => 1,
            ErrorCode::UnknownMacroflow => 2,
            ErrorCode::DuplicateFlow => 3,
            ErrorCode::InvalidWeight => 4,
            ErrorCode::InvalidThresh => 5,
            ErrorCode::OutOfHandles => 6,
            ErrorCode::TooManyFlows => 7,
            ErrorCode::InvalidReport => 8,
            ErrorCode::Malformed => 16,
            ErrorCode::Unavailable => 17,
            ErrorCode::Other(b) => b,
        }
    }

    /// The code a byte names; unknown bytes become [`ErrorCode::Other`].
    pub fn from_byte(b: u8) -> ErrorCode {
        match b {
            1 => ErrorCode::UnknownFlow,
            2 => ErrorCode::UnknownMacroflow,
            3 => ErrorCode::DuplicateFlow,
            4 => ErrorCode::InvalidWeight,
            5 => ErrorCode::InvalidThresh,
            6 => ErrorCode::OutOfHandles,
            7 => ErrorCode::TooManyFlows,
            8 => ErrorCode::InvalidReport,
            16 => ErrorCode::Malformed,
            17 => ErrorCode::Unavailable,
            other => ErrorCode::Other(other),
        }
    }
}

/// The daemon's counters, the answer to [`Request::Status`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// Clients connected now.
    pub clients: u32,
    /// Flows open now.
    pub flows: u32,
    /// Frames that did not decode since the daemon started.
    pub malformed_frames: u64,
    /// Grants handed out since the daemon started.
    pub grants: u64,
    /// Grants that expired unused.
    pub grants_expired: u64,
    /// Events dropped because a client did not read them in time.
    pub events_dropped: u64,
}

/// Most macroflows in one [`Reply::Macroflows`], so that the frame stays below [`MAX_FRAME`].
pub const MACROFLOWS_PER_PAGE: usize = 12;

/// One macroflow as `concord-cm status` shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MacroflowInfo {
    /// Its handle.
    pub id: MacroflowId,
    /// The destination host.
    pub dst: Ipv4Addr,
    /// Flows in it.
    pub flows: u32,
    /// The rate it may send at now, aging included, in bit/s.
    pub rate: Rate,
    /// Its congestion window, in bytes.
    pub cwnd: u64,
    /// Its smoothed RTT, if measured.
    pub srtt: Option<Duration>,
    /// Its RTT variation, if measured.
    pub rttvar: Option<Duration>,
    /// Halvings of exponential aging in force now (0: feedback is current).
    pub aged: u32,
    /// Packets its flows sent in intervals that probe responses measured.
    pub sent_packets: u64,
    /// Of these, packets the responses reported lost.
    pub lost_packets: u64,
}

impl MacroflowInfo {
    /// The loss estimate: packets lost over packets measured, 0 before any measurement.
    pub fn loss(&self) -> f64 {
        if self.sent_packets == 0 {
            0.0
        } else {
            self.lost_packets as f64 / self.sent_packets as f64
        }
    }
}

impl std::fmt::Display for MacroflowInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |d: Option<Duration>| {
            d.map_or("-".to_string(), |d| {
                format!("{:.1}ms", d.as_nanos() as f64 / 1e6)
            })
        };
        write!(
            f,
            "macroflow {} dst {} flows {} rate {} bit/s cwnd {} srtt {} rttvar {} aged {} loss {:.4}",
            self.id.0,
            self.dst,
            self.flows,
            self.rate.bps(),
            self.cwnd,
            ms(self.srtt),
            ms(self.rttvar),
            self.aged,
            self.loss()
        )
    }
}

/// The daemon's answer to one [`Request`].
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// Done; nothing to return.
    Ok,
    /// The flow opened.
    Opened(FlowId),
    /// `cm_query`'s values.
    Query(QueryResult),
    /// The flow's macroflow.
    Macroflow(MacroflowId),
    /// The daemon's counters.
    Status(Status),
    /// A page of macroflows, in handle order; `more` if others follow (ask again from the
    /// last handle plus one).
    Macroflows {
        /// Others follow.
        more: bool,
        /// At most [`MACROFLOWS_PER_PAGE`].
        list: Vec<MacroflowInfo>,
    },
    /// Refused; nothing changed.
    Error {
        /// Why.
        code: ErrorCode,
        /// A sentence for people, at most [`MAX_MESSAGE`] bytes.
        message: String,
    },
}

/// What the manager tells a client without being asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// `app_notify`: the flow may send up to `bytes` now, and reports what it sent with
    /// [`Request::Notify`].
    Grant {
        /// The flow.
        flow: FlowId,
        /// Bytes allowed, at most one MTU.
        bytes: u64,
    },
    /// `change_rate`: the flow's share or the RTT changed beyond its thresholds.
    ChangeRate {
        /// The flow.
        flow: FlowId,
        /// The flow's share of its macroflow's rate.
        rate: Rate,
        /// The macroflow's smoothed RTT.
        srtt: Duration,
        /// The macroflow's RTT variation.
        rttdev: Duration,
    },
    /// A grant was not reported with notify within its lifetime and may not be used.
    GrantExpired {
        /// The flow.
        flow: FlowId,
        /// Bytes of the grant.
        bytes: u64,
    },
}

/// A frame from a client to the daemon.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClientMessage {
    /// Chosen by the client, echoed in the reply.
    pub id: u32,
    /// The call.
    pub request: Request,
}

/// A frame from the daemon to a client.
#[derive(Clone, Debug, PartialEq)]
pub enum ServerMessage {
    /// The answer to the request with this id.
    Reply {
        /// The request's id.
        id: u32,
        /// The answer.
        reply: Reply,
    },
    /// A pushed event.
    Event(Event),
    /// The connection is being closed because of `code`; no more frames follow.
    Fatal {
        /// Why.
        code: ErrorCode,
        /// A sentence for people.
        message: String,
    },
}

// Kind bytes: requests 0x01.., replies 0x81.., events 0xc1.., fatal 0xff.
const K_OPEN: u8 = 0x01;
const K_REQUEST: u8 = 0x02;
const K_NOTIFY: u8 = 0x03;
const K_UPDATE: u8 = 0x04;
const K_QUERY: u8 = 0x05;
const K_CLOSE: u8 = 0x06;
const K_SET_MACROFLOW: u8 = 0x07;
const K_GET_MACROFLOW: u8 = 0x08;
const K_THRESH: u8 = 0x09;
const K_STATUS: u8 = 0x0a;
const K_RECEIVED: u8 = 0x0b;
const K_SET_FEEDBACK: u8 = 0x0c;
const K_MACROFLOWS: u8 = 0x0d;
const K_MACROFLOWS_REPLY: u8 = 0x86;
const K_OK: u8 = 0x81;
const K_OPENED: u8 = 0x82;
const K_QUERY_REPLY: u8 = 0x83;
const K_MACROFLOW: u8 = 0x84;
const K_STATUS_REPLY: u8 = 0x85;
const K_ERROR: u8 = 0x8f;
const K_GRANT: u8 = 0xc1;
const K_CHANGE_RATE: u8 = 0xc2;
const K_GRANT_EXPIRED: u8 = 0xc3;
const K_FATAL: u8 = 0xff;

/// Builds one frame: reserves the prefix, writes the header, fills the length at the end.
struct FrameWriter {
    /// What came before the frame, then the frame so far, prefix included.
    buf: Vec<u8>,
    /// Where the frame's prefix starts in `buf`.
    start: usize,
}

impl FrameWriter {
    fn new(kind: u8) -> FrameWriter {
        FrameWriter::onto(Vec::with_capacity(64), kind)
    }
    /// A frame appended to `buf`, whose bytes stay before it.
    fn onto(mut buf: Vec<u8>, kind: u8) -> FrameWriter {
        let start = buf.len();
        buf.extend_from_slice(&[0; PREFIX_LEN]);
        buf.push(VERSION);
        buf.push(kind);
        FrameWriter { buf, start }
    }
    fn u8(&mut self, v: u8) -> &mut Self {
        self.buf.push(v);
        self
    }
    fn u16(&mut self, v: u16) -> &mut Self {
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn f64(&mut self, v: f64) -> &mut Self {
        self.u64(v.to_bits())
    }
    /// A presence byte, then the value or 8 zero bytes.
    fn opt_u64(&mut self, v: Option<u64>) -> &mut Self {
        match v {
            Some(x) => self.u8(1).u64(x),
            None => self.u8(0).u64(0),
        }
    }
    /// A u16 length, then the UTF-8 bytes, cut to [`MAX_MESSAGE`] at a character boundary.
    fn text(&mut self, s: &str) -> &mut Self {
        let mut end = s.len().min(MAX_MESSAGE);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        let bytes = &s.as_bytes()[..end];
        // end <= MAX_MESSAGE < u16::MAX
        self.u16(end as u16);
        self.buf.extend_from_slice(bytes);
        self
    }
    fn finish(mut self) -> Vec<u8> {
        let len = (self.buf.len() - self.start - PREFIX_LEN) as u32;
        self.buf[self.start..self.start + PREFIX_LEN].copy_from_slice(&len.to_be_bytes());
        self.buf
    }
}

/// Reads fields off a frame body, never past its end.
struct Reader<'a> {
    /// The body.
    buf: &'a [u8],
    /// Next byte to read.
    pos: usize,
    /// The kind being decoded, for errors.
    kind: &'static str,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.pos.saturating_add(n);
        match self.buf.get(self.pos..end) {
            Some(s) => {
                self.pos = end;
                Ok(s)
            }
            None => Err(DecodeError::Truncated {
                kind: self.kind,
                needed: end,
                have: self.buf.len(),
            }),
        }
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut a = [0; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }
    fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(self.array()?))
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.array()?))
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_be_bytes(self.array()?))
    }
    fn f64(&mut self) -> Result<f64, DecodeError> {
        Ok(f64::from_bits(self.u64()?))
    }
    fn flow(&mut self) -> Result<FlowId, DecodeError> {
        Ok(FlowId(self.u32()?))
    }
    fn flag(&mut self) -> Result<bool, DecodeError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(DecodeError::BadFlag(b)),
        }
    }
    fn opt_u64(&mut self) -> Result<Option<u64>, DecodeError> {
        let present = self.flag()?;
        let v = self.u64()?;
        Ok(present.then_some(v))
    }
    fn text(&mut self) -> Result<String, DecodeError> {
        let len = usize::from(self.u16()?);
        if len > MAX_MESSAGE {
            return Err(DecodeError::BadMessage("longer than the limit"));
        }
        let bytes = self.take(len)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| DecodeError::BadMessage("not UTF-8"))
    }
    fn end(&self) -> Result<(), DecodeError> {
        match self.buf.len() - self.pos {
            0 => Ok(()),
            n => Err(DecodeError::TrailingBytes(n)),
        }
    }
}

/// Checks the version and returns the kind byte and a reader positioned at the payload.
fn header(body: &[u8]) -> Result<(u8, Reader<'_>), DecodeError> {
    let mut r = Reader {
        buf: body,
        pos: 0,
        kind: "header",
    };
    let version = r.u8()?;
    if version != VERSION {
        return Err(DecodeError::UnsupportedVersion(version));
    }
    let kind = r.u8()?;
    Ok((kind, r))
}

fn loss_mode_byte(m: LossMode) -> u8 {
    match m {
        LossMode::NoCongestion => 0,
        LossMode::Transient => 1,
        LossMode::Persistent => 2,
        LossMode::Ecn => 3,
    }
}

fn loss_mode_from(b: u8) -> Result<LossMode, DecodeError> {
    Ok(match b {
        0 => LossMode::NoCongestion,
        1 => LossMode::Transient,
        2 => LossMode::Persistent,
        3 => LossMode::Ecn,
        other => return Err(DecodeError::BadLossMode(other)),
    })
}

impl ClientMessage {
    /// The frame, length prefix included.
    pub fn encode(&self) -> Vec<u8> {
        let kind = match self.request {
            Request::Open(_) => K_OPEN,
            Request::Request { .. } => K_REQUEST,
            Request::Notify { .. } => K_NOTIFY,
            Request::Update { .. } => K_UPDATE,
            Request::Query { .. } => K_QUERY,
            Request::Close { .. } => K_CLOSE,
            Request::SetMacroflow { .. } => K_SET_MACROFLOW,
            Request::GetMacroflow { .. } => K_GET_MACROFLOW,
            Request::Thresh { .. } => K_THRESH,
            Request::Status => K_STATUS,
            Request::Received { .. } => K_RECEIVED,
            Request::SetFeedback { .. } => K_SET_FEEDBACK,
            Request::Macroflows { .. } => K_MACROFLOWS,
        };
        let mut w = FrameWriter::new(kind);
        w.u32(self.id);
        match self.request {
            Request::Open(key) => {
                w.u32(u32::from(key.dst))
                    .u16(key.dst_port)
                    .u16(key.src_port)
                    .u32(key.flow_id);
            }
            Request::Request { flow, nbytes } => {
                w.u32(flow.0).u64(nbytes);
            }
            Request::Notify { flow, nsent } => {
                w.u32(flow.0).u64(nsent);
            }
            Request::Update { flow, update } => {
                w.u32(flow.0)
                    .u64(update.nrecd)
                    .u64(update.nlost)
                    .u8(loss_mode_byte(update.loss_mode))
                    .opt_u64(update.rtt.map(Duration::as_nanos));
            }
            Request::Query { flow } | Request::Close { flow } | Request::GetMacroflow { flow } => {
                w.u32(flow.0);
            }
            Request::SetMacroflow { flow, target } => {
                w.u32(flow.0);
                match target {
                    Some(m) => w.u8(1).u32(m.0),
                    None => w.u8(0).u32(0),
                };
            }
            Request::Thresh { flow, thresh } => {
                w.u32(flow.0)
                    .f64(thresh.rate_downthresh)
                    .f64(thresh.rate_upthresh)
                    .f64(thresh.rtt_downthresh)
                    .f64(thresh.rtt_upthresh);
            }
            Request::Status => {}
            Request::Received {
                from,
                tag,
                bytes,
                ce,
            } => {
                w.u32(u32::from(from))
                    .u16(tag.src_port)
                    .u16(tag.dst_port)
                    .u32(tag.flow_id)
                    .u64(bytes)
                    .u8(u8::from(ce));
            }
            Request::SetFeedback { flow, mode } => {
                w.u32(flow.0).u8(u8::from(mode == FeedbackMode::Explicit));
            }
            Request::Macroflows { start } => {
                w.u32(start);
            }
        }
        w.finish()
    }

    /// Decodes a frame body (the bytes after the length prefix).
    pub fn decode(body: &[u8]) -> Result<ClientMessage, DecodeError> {
        let (kind, mut r) = header(body)?;
        r.kind = match kind {
            K_OPEN => "open",
            K_REQUEST => "request",
            K_NOTIFY => "notify",
            K_UPDATE => "update",
            K_QUERY => "query",
            K_CLOSE => "close",
            K_SET_MACROFLOW => "set_macroflow",
            K_GET_MACROFLOW => "get_macroflow",
            K_THRESH => "thresh",
            K_STATUS => "status",
            K_RECEIVED => "received",
            K_SET_FEEDBACK => "set_feedback",
            K_MACROFLOWS => "macroflows",
            other => return Err(DecodeError::UnknownKind(other)),
        };
        let id = r.u32()?;
        let request = match kind {
            K_OPEN => Request::Open(FlowKey {
                dst: Ipv4Addr::from(r.u32()?),
                dst_port: r.u16()?,
                src_port: r.u16()?,
                flow_id: r.u32()?,
            }),
            K_REQUEST => Request::Request {
                flow: r.flow()?,
                nbytes: r.u64()?,
            },
            K_NOTIFY => Request::Notify {
                flow: r.flow()?,
                nsent: r.u64()?,
            },
            K_UPDATE => {
                let flow = r.flow()?;
                let nrecd = r.u64()?;
                let nlost = r.u64()?;
                let loss_mode = loss_mode_from(r.u8()?)?;
                let rtt = r.opt_u64()?.map(Duration::from_nanos);
                Request::Update {
                    flow,
                    update: CmUpdate {
                        nrecd,
                        nlost,
                        loss_mode,
                        rtt,
                    },
                }
            }
            K_QUERY => Request::Query { flow: r.flow()? },
            K_CLOSE => Request::Close { flow: r.flow()? },
            K_SET_MACROFLOW => {
                let flow = r.flow()?;
                let present = r.flag()?;
                let m = MacroflowId(r.u32()?);
                Request::SetMacroflow {
                    flow,
                    target: present.then_some(m),
                }
            }
            K_GET_MACROFLOW => Request::GetMacroflow { flow: r.flow()? },
            K_THRESH => Request::Thresh {
                flow: r.flow()?,
                thresh: ThreshHint {
                    rate_downthresh: r.f64()?,
                    rate_upthresh: r.f64()?,
                    rtt_downthresh: r.f64()?,
                    rtt_upthresh: r.f64()?,
                },
            },
            K_RECEIVED => Request::Received {
                from: Ipv4Addr::from(r.u32()?),
                tag: FlowTag {
                    src_port: r.u16()?,
                    dst_port: r.u16()?,
                    flow_id: r.u32()?,
                },
                bytes: r.u64()?,
                ce: r.flag()?,
            },
            K_SET_FEEDBACK => Request::SetFeedback {
                flow: r.flow()?,
                mode: if r.flag()? {
                    FeedbackMode::Explicit
                } else {
                    FeedbackMode::Implicit
                },
            },
            K_MACROFLOWS => Request::Macroflows { start: r.u32()? },
            _ => Request::Status,
        };
        r.end()?;
        Ok(ClientMessage { id, request })
    }
}

impl ServerMessage {
    /// The frame, length prefix included.
    pub fn encode(&self) -> Vec<u8> {
        self.encode_onto(Vec::with_capacity(64))
    }

    /// Appends the frame, length prefix included, to `out`: no allocation once `out` has room.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        *out = self.encode_onto(std::mem::take(out));
    }

    /// `buf` with the frame appended.
    fn encode_onto(&self, buf: Vec<u8>) -> Vec<u8> {
        match self {
            ServerMessage::Reply { id, reply } => {
                let kind = match reply {
                    Reply::Ok => K_OK,
                    Reply::Opened(_) => K_OPENED,
                    Reply::Query(_) => K_QUERY_REPLY,
                    Reply::Macroflow(_) => K_MACROFLOW,
                    Reply::Status(_) => K_STATUS_REPLY,
                    Reply::Macroflows { .. } => K_MACROFLOWS_REPLY,
                    Reply::Error { .. } => K_ERROR,
                };
                let mut w = FrameWriter::onto(buf, kind);
                w.u32(*id);
                match reply {
                    Reply::Ok => {}
                    Reply::Opened(f) => {
                        w.u32(f.0);
                    }
                    Reply::Query(q) => {
                        w.opt_u64(q.rate.map(Rate::bps))
                            .opt_u64(q.srtt.map(Duration::as_nanos))
                            .opt_u64(q.rttdev.map(Duration::as_nanos));
                    }
                    Reply::Macroflow(m) => {
                        w.u32(m.0);
                    }
                    Reply::Status(s) => {
                        w.u32(s.clients)
                            .u32(s.flows)
                            .u64(s.malformed_frames)
                            .u64(s.grants)
                            .u64(s.grants_expired)
                            .u64(s.events_dropped);
                    }
                    Reply::Macroflows { more, list } => {
                        let n = list.len().min(MACROFLOWS_PER_PAGE);
                        w.u8(u8::from(*more)).u16(n as u16);
                        for m in list.iter().take(n) {
                            w.u32(m.id.0)
                                .u32(u32::from(m.dst))
                                .u32(m.flows)
                                .u64(m.rate.bps())
                                .u64(m.cwnd)
                                .opt_u64(m.srtt.map(Duration::as_nanos))
                                .opt_u64(m.rttvar.map(Duration::as_nanos))
                                .u32(m.aged)
                                .u64(m.sent_packets)
                                .u64(m.lost_packets);
                        }
                    }
                    Reply::Error { code, message } => {
                        w.u8(code.to_byte()).text(message);
                    }
                }
                w.finish()
            }
            ServerMessage::Event(e) => match *e {
                Event::Grant { flow, bytes } => {
                    let mut w = FrameWriter::onto(buf, K_GRANT);
                    w.u32(flow.0).u64(bytes);
                    w.finish()
                }
                Event::ChangeRate {
                    flow,
                    rate,
                    srtt,
                    rttdev,
                } => {
                    let mut w = FrameWriter::onto(buf, K_CHANGE_RATE);
                    w.u32(flow.0)
                        .u64(rate.bps())
                        .u64(srtt.as_nanos())
                        .u64(rttdev.as_nanos());
                    w.finish()
                }
                Event::GrantExpired { flow, bytes } => {
                    let mut w = FrameWriter::onto(buf, K_GRANT_EXPIRED);
                    w.u32(flow.0).u64(bytes);
                    w.finish()
                }
            },
            ServerMessage::Fatal { code, message } => {
                let mut w = FrameWriter::onto(buf, K_FATAL);
                w.u8(code.to_byte()).text(message);
                w.finish()
            }
        }
    }

    /// Decodes a frame body (the bytes after the length prefix).
    pub fn decode(body: &[u8]) -> Result<ServerMessage, DecodeError> {
        let (kind, mut r) = header(body)?;
        r.kind = match kind {
            K_OK => "ok",
            K_OPENED => "opened",
            K_QUERY_REPLY => "query reply",
            K_MACROFLOW => "macroflow",
            K_STATUS_REPLY => "status reply",
            K_MACROFLOWS_REPLY => "macroflows reply",
            K_ERROR => "error",
            K_GRANT => "grant",
            K_CHANGE_RATE => "change_rate",
            K_GRANT_EXPIRED => "grant expired",
            K_FATAL => "fatal",
            other => return Err(DecodeError::UnknownKind(other)),
        };
        let msg = match kind {
            K_GRANT => ServerMessage::Event(Event::Grant {
                flow: r.flow()?,
                bytes: r.u64()?,
            }),
            K_CHANGE_RATE => ServerMessage::Event(Event::ChangeRate {
                flow: r.flow()?,
                rate: Rate::from_bps(r.u64()?),
                srtt: Duration::from_nanos(r.u64()?),
                rttdev: Duration::from_nanos(r.u64()?),
            }),
            K_GRANT_EXPIRED => ServerMessage::Event(Event::GrantExpired {
                flow: r.flow()?,
                bytes: r.u64()?,
            }),
            K_FATAL => ServerMessage::Fatal {
                code: ErrorCode::from_byte(r.u8()?),
                message: r.text()?,
            },
            _ => {
                let id = r.u32()?;
                let reply = match kind {
                    K_OK => Reply::Ok,
                    K_OPENED => Reply::Opened(r.flow()?),
                    K_QUERY_REPLY => Reply::Query(QueryResult {
                        rate: r.opt_u64()?.map(Rate::from_bps),
                        srtt: r.opt_u64()?.map(Duration::from_nanos),
                        rttdev: r.opt_u64()?.map(Duration::from_nanos),
                    }),
                    K_MACROFLOW => Reply::Macroflow(MacroflowId(r.u32()?)),
                    K_STATUS_REPLY => Reply::Status(Status {
                        clients: r.u32()?,
                        flows: r.u32()?,
                        malformed_frames: r.u64()?,
                        grants: r.u64()?,
                        grants_expired: r.u64()?,
                        events_dropped: r.u64()?,
                    }),
                    K_MACROFLOWS_REPLY => {
                        let more = r.flag()?;
                        let n = usize::from(r.u16()?);
                        if n > MACROFLOWS_PER_PAGE {
                            return Err(DecodeError::BadMessage("too many macroflows in a page"));
                        }
                        let mut list = Vec::with_capacity(n);
                        for _ in 0..n {
                            list.push(MacroflowInfo {
                                id: MacroflowId(r.u32()?),
                                dst: Ipv4Addr::from(r.u32()?),
                                flows: r.u32()?,
                                rate: Rate::from_bps(r.u64()?),
                                cwnd: r.u64()?,
                                srtt: r.opt_u64()?.map(Duration::from_nanos),
                                rttvar: r.opt_u64()?.map(Duration::from_nanos),
                                aged: r.u32()?,
                                sent_packets: r.u64()?,
                                lost_packets: r.u64()?,
                            });
                        }
                        Reply::Macroflows { more, list }
                    }
                    _ => Reply::Error {
                        code: ErrorCode::from_byte(r.u8()?),
                        message: r.text()?,
                    },
                };
                ServerMessage::Reply { id, reply }
            }
        };
        r.end()?;
        Ok(msg)
    }
}

/// Splits a byte stream into frame bodies.
///
/// Feed it what the socket delivered with [`FrameBuffer::extend`], then take whole bodies with
/// [`FrameBuffer::next_frame`]. A bad length prefix is an error from which the stream cannot
/// recover: the caller closes the connection.
#[derive(Debug, Default)]
pub struct FrameBuffer {
    /// Bytes received and not yet taken.
    buf: Vec<u8>,
    /// Where the unread bytes start in `buf`.
    start: usize,
}

impl FrameBuffer {
    /// An empty buffer.
    pub fn new() -> FrameBuffer {
        FrameBuffer::default()
    }

    /// Appends received bytes.
    pub fn extend(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes received and not yet taken as frames.
    pub fn pending(&self) -> usize {
        self.buf.len() - self.start
    }

    /// The next whole frame body, `Ok(None)` if more bytes are needed, or
    /// [`DecodeError::BadLength`] if the prefix is out of range.
    pub fn next_frame(&mut self) -> Result<Option<Vec<u8>>, DecodeError> {
        Ok(self.next_body()?.map(<[u8]>::to_vec))
    }

    /// [`FrameBuffer::next_frame`] without a copy: the body, borrowed from the buffer until
    /// the next call.
    pub fn next_body(&mut self) -> Result<Option<&[u8]>, DecodeError> {
        if self.start > 64 * 1024 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        let rest = &self.buf[self.start..];
        let Some(prefix) = rest.get(..PREFIX_LEN) else {
            return Ok(None);
        };
        let mut p = [0; PREFIX_LEN];
        p.copy_from_slice(prefix);
        let len = u32::from_be_bytes(p);
        let n = len as usize;
        if !(2..=MAX_FRAME).contains(&n) {
            return Err(DecodeError::BadLength(len));
        }
        if rest.len() < PREFIX_LEN + n {
            return Ok(None);
        }
        let body = self.start + PREFIX_LEN..self.start + PREFIX_LEN + n;
        self.start = body.end;
        Ok(Some(&self.buf[body]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use concord_cc::rng::Rng;

    fn body(frame: &[u8]) -> &[u8] {
        &frame[PREFIX_LEN..]
    }

    fn random_f64(rng: &mut Rng) -> f64 {
        match rng.below(4) {
            0 => f64::INFINITY,
            1 => 0.0,
            _ => rng.uniform() * 10.0,
        }
    }

    fn random_flow(rng: &mut Rng) -> FlowId {
        FlowId(rng.next_u64() as u32)
    }

    fn random_opt(rng: &mut Rng) -> Option<u64> {
        rng.bernoulli(0.5).then(|| rng.next_u64())
    }

    fn random_text(rng: &mut Rng) -> String {
        let n = rng.below(40) as usize;
        (0..n)
            .map(|_| char::from_u32(rng.below(0x3000) as u32).unwrap_or('x'))
            .collect()
    }

    fn random_request(rng: &mut Rng) -> Request {
        let flow = random_flow(rng);
        match rng.below(13) {
            12 => Request::Macroflows {
                start: rng.next_u64() as u32,
            },
            10 => Request::Received {
                from: Ipv4Addr::from(rng.next_u64() as u32),
                tag: FlowTag {
                    src_port: rng.next_u64() as u16,
                    dst_port: rng.next_u64() as u16,
                    flow_id: rng.next_u64() as u32,
                },
                bytes: rng.next_u64(),
                ce: rng.bernoulli(0.5),
            },
            11 => Request::SetFeedback {
                flow,
                mode: if rng.bernoulli(0.5) {
                    FeedbackMode::Explicit
                } else {
                    FeedbackMode::Implicit
                },
            },
            0 => Request::Open(FlowKey {
                dst: Ipv4Addr::from(rng.next_u64() as u32),
                dst_port: rng.next_u64() as u16,
                src_port: rng.next_u64() as u16,
                flow_id: rng.next_u64() as u32,
            }),
            1 => Request::Request {
                flow,
                nbytes: rng.next_u64(),
            },
            2 => Request::Notify {
                flow,
                nsent: rng.next_u64(),
            },
            3 => Request::Update {
                flow,
                update: CmUpdate {
                    nrecd: rng.next_u64(),
                    nlost: rng.next_u64(),
                    loss_mode: [
                        LossMode::NoCongestion,
                        LossMode::Transient,
                        LossMode::Persistent,
                        LossMode::Ecn,
                    ][rng.below(4) as usize],
                    rtt: random_opt(rng).map(Duration::from_nanos),
                },
            },
            4 => Request::Query { flow },
            5 => Request::Close { flow },
            6 => Request::SetMacroflow {
                flow,
                target: rng
                    .bernoulli(0.5)
                    .then(|| MacroflowId(rng.next_u64() as u32)),
            },
            7 => Request::GetMacroflow { flow },
            8 => Request::Thresh {
                flow,
                thresh: ThreshHint {
                    rate_downthresh: random_f64(rng),
                    rate_upthresh: random_f64(rng),
                    rtt_downthresh: random_f64(rng),
                    rtt_upthresh: random_f64(rng),
                },
            },
            _ => Request::Status,
        }
    }

    fn random_server(rng: &mut Rng) -> ServerMessage {
        let flow = random_flow(rng);
        let id = rng.next_u64() as u32;
        let reply = |reply| ServerMessage::Reply { id, reply };
        match rng.below(10) {
            8 => reply(Reply::Macroflows {
                more: rng.bernoulli(0.5),
                list: (0..rng.below(MACROFLOWS_PER_PAGE as u64 + 1))
                    .map(|_| MacroflowInfo {
                        id: MacroflowId(rng.next_u64() as u32),
                        dst: Ipv4Addr::from(rng.next_u64() as u32),
                        flows: rng.next_u64() as u32,
                        rate: Rate::from_bps(rng.next_u64()),
                        cwnd: rng.next_u64(),
                        srtt: random_opt(rng).map(Duration::from_nanos),
                        rttvar: random_opt(rng).map(Duration::from_nanos),
                        aged: rng.next_u64() as u32,
                        sent_packets: rng.next_u64(),
                        lost_packets: rng.next_u64(),
                    })
                    .collect(),
            }),
            0 => reply(Reply::Ok),
            1 => reply(Reply::Opened(flow)),
            2 => reply(Reply::Query(QueryResult {
                rate: random_opt(rng).map(Rate::from_bps),
                srtt: random_opt(rng).map(Duration::from_nanos),
                rttdev: random_opt(rng).map(Duration::from_nanos),
            })),
            3 => reply(Reply::Macroflow(MacroflowId(rng.next_u64() as u32))),
            4 => reply(Reply::Status(Status {
                clients: rng.next_u64() as u32,
                flows: rng.next_u64() as u32,
                malformed_frames: rng.next_u64(),
                grants: rng.next_u64(),
                grants_expired: rng.next_u64(),
                events_dropped: rng.next_u64(),
            })),
            5 => reply(Reply::Error {
                code: ErrorCode::from_byte(rng.next_u64() as u8),
                message: random_text(rng),
            }),
            6 => ServerMessage::Event(Event::Grant {
                flow,
                bytes: rng.next_u64(),
            }),
            7 => ServerMessage::Event(Event::ChangeRate {
                flow,
                rate: Rate::from_bps(rng.next_u64()),
                srtt: Duration::from_nanos(rng.next_u64()),
                rttdev: Duration::from_nanos(rng.next_u64()),
            }),
            _ => ServerMessage::Fatal {
                code: ErrorCode::from_byte(rng.next_u64() as u8),
                message: random_text(rng),
            },
        }
    }

    #[test]
    fn random_valid_messages_round_trip_exactly() {
        let mut rng = Rng::new(7);
        for _ in 0..20_000 {
            let m = ClientMessage {
                id: rng.next_u64() as u32,
                request: random_request(&mut rng),
            };
            let frame = m.encode();
            assert!(frame.len() - PREFIX_LEN <= MAX_FRAME);
            assert_eq!(ClientMessage::decode(body(&frame)), Ok(m));
            let s = random_server(&mut rng);
            let frame = s.encode();
            assert!(frame.len() - PREFIX_LEN <= MAX_FRAME);
            assert_eq!(ServerMessage::decode(body(&frame)), Ok(s));
        }
    }

    #[test]
    fn random_byte_strings_never_panic() {
        let mut rng = Rng::new(11);
        let mut decoded = 0u32;
        for i in 0..200_000u32 {
            let n = rng.below(80) as usize;
            let mut bytes: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
            // Half the strings start like a real header, so decoding goes past it.
            if i % 2 == 0 && bytes.len() >= 2 {
                bytes[0] = VERSION;
                bytes[1] = [K_OPEN, K_UPDATE, K_THRESH, K_ERROR, K_FATAL, K_QUERY_REPLY]
                    [rng.below(6) as usize];
            }
            decoded += u32::from(ClientMessage::decode(&bytes).is_ok());
            decoded += u32::from(ServerMessage::decode(&bytes).is_ok());
            let mut fb = FrameBuffer::new();
            fb.extend(&bytes);
            while let Ok(Some(b)) = fb.next_frame() {
                let _ = ClientMessage::decode(&b);
            }
        }
        // Some random strings are valid messages: the decoder is not trivially refusing.
        assert!(decoded > 0);
    }

    #[test]
    fn every_truncation_of_a_valid_frame_is_a_typed_error() {
        let mut rng = Rng::new(3);
        for _ in 0..500 {
            let m = ClientMessage {
                id: 9,
                request: random_request(&mut rng),
            };
            let frame = m.encode();
            let b = body(&frame);
            for cut in 0..b.len() {
                assert!(matches!(
                    ClientMessage::decode(&b[..cut]),
                    Err(DecodeError::Truncated { .. })
                ));
            }
            let mut long = b.to_vec();
            long.push(0);
            assert_eq!(
                ClientMessage::decode(&long),
                Err(DecodeError::TrailingBytes(1))
            );
        }
    }

    #[test]
    fn a_bad_version_or_kind_or_loss_mode_is_named() {
        assert_eq!(
            ClientMessage::decode(&[2, K_OPEN]),
            Err(DecodeError::UnsupportedVersion(2))
        );
        assert_eq!(
            ClientMessage::decode(&[VERSION, 0x7e, 0, 0, 0, 0]),
            Err(DecodeError::UnknownKind(0x7e))
        );
        assert_eq!(
            ClientMessage::decode(&[VERSION, K_OK, 0, 0, 0, 1]),
            Err(DecodeError::UnknownKind(K_OK))
        );
        let m = ClientMessage {
            id: 1,
            request: Request::Update {
                flow: FlowId(1),
                update: CmUpdate::default(),
            },
        };
        let mut frame = m.encode();
        // version, kind, id (4), flow (4), nrecd (8), nlost (8), then the loss mode byte.
        frame[PREFIX_LEN + 26] = 9;
        assert_eq!(
            ClientMessage::decode(body(&frame)),
            Err(DecodeError::BadLossMode(9))
        );
    }

    #[test]
    fn the_frame_buffer_splits_a_stream_at_any_boundary() {
        let frames: Vec<Vec<u8>> = (0..5u32)
            .map(|id| {
                ClientMessage {
                    id,
                    request: Request::Query { flow: FlowId(id) },
                }
                .encode()
            })
            .collect();
        let stream: Vec<u8> = frames.concat();
        for chunk in 1..stream.len() {
            let mut fb = FrameBuffer::new();
            let mut got = Vec::new();
            for piece in stream.chunks(chunk) {
                fb.extend(piece);
                while let Some(b) = fb.next_frame().expect("valid frames") {
                    got.push(ClientMessage::decode(&b).expect("valid message").id);
                }
            }
            assert_eq!(got, [0, 1, 2, 3, 4]);
            assert_eq!(fb.pending(), 0);
        }
    }

    /// Frames appended to one buffer are the frames `encode` builds, back to back, and the
    /// buffer's capacity is reused once it has room.
    #[test]
    fn encode_into_appends_the_same_frames() {
        let msgs = [
            ServerMessage::Reply {
                id: 7,
                reply: Reply::Ok,
            },
            ServerMessage::Event(Event::Grant {
                flow: FlowId(3),
                bytes: 1448,
            }),
            ServerMessage::Reply {
                id: 8,
                reply: Reply::Opened(FlowId(9)),
            },
            ServerMessage::Fatal {
                code: ErrorCode::Malformed,
                message: "bad".into(),
            },
        ];
        let mut out = vec![0xaa];
        for m in &msgs {
            m.encode_into(&mut out);
        }
        let mut want = vec![0xaa];
        for m in &msgs {
            want.extend_from_slice(&m.encode());
        }
        assert_eq!(out, want);
        let (cap, ptr) = (out.capacity(), out.as_ptr());
        out.clear();
        msgs[1].encode_into(&mut out);
        assert_eq!(out, msgs[1].encode());
        assert_eq!(
            (out.capacity(), out.as_ptr()),
            (cap, ptr),
            "no new allocation"
        );
    }

    /// The borrowed body is the copied one, frame by frame, across the buffer's compaction
    /// (past 64 KiB taken).
    #[test]
    fn next_body_is_next_frame_without_the_copy() {
        let frame = |id: u32| {
            ClientMessage {
                id,
                request: Request::Query { flow: FlowId(id) },
            }
            .encode()
        };
        let stream: Vec<u8> = (0..10_000u32).flat_map(frame).collect();
        let (mut a, mut b) = (FrameBuffer::new(), FrameBuffer::new());
        let mut n = 0u32;
        for piece in stream.chunks(1000) {
            a.extend(piece);
            b.extend(piece);
            while let Some(x) = a.next_frame().expect("valid") {
                let y = b.next_body().expect("valid").expect("the same frame");
                assert_eq!(x, y);
                assert_eq!(ClientMessage::decode(y).expect("decodes").id, n);
                n += 1;
            }
            assert_eq!(b.next_body(), Ok(None));
        }
        assert_eq!(n, 10_000);
        assert_eq!(b.pending(), 0);
    }

    #[test]
    fn the_example_of_the_protocol_document_encodes_as_printed() {
        let open = ClientMessage {
            id: 1,
            request: Request::Open(FlowKey::new(Ipv4Addr::new(192, 0, 2, 7), 5004, 40000)),
        };
        let expected: [u8; 22] = [
            0, 0, 0, 18, 1, 1, 0, 0, 0, 1, 192, 0, 2, 7, 0x13, 0x8c, 0x9c, 0x40, 0, 0, 0, 0,
        ];
        assert_eq!(open.encode(), expected);
        let opened = ServerMessage::Reply {
            id: 1,
            reply: Reply::Opened(FlowId(0)),
        };
        assert_eq!(
            opened.encode(),
            [0, 0, 0, 10, 1, 0x82, 0, 0, 0, 1, 0, 0, 0, 0]
        );
    }

    #[test]
    fn an_oversized_or_empty_length_prefix_is_refused() {
        let mut fb = FrameBuffer::new();
        fb.extend(&(MAX_FRAME as u32 + 1).to_be_bytes());
        assert_eq!(
            fb.next_frame(),
            Err(DecodeError::BadLength(MAX_FRAME as u32 + 1))
        );
        let mut fb = FrameBuffer::new();
        fb.extend(&[0, 0, 0, 1, VERSION]);
        assert_eq!(fb.next_frame(), Err(DecodeError::BadLength(1)));
    }
}
