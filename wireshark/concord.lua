-- concord.lua: a Wireshark dissector for concord's wire formats.
--
--   gccp      GCCA's Generic Congestion Control Protocol (Liu, Cheung & Baras, section 3.1),
--             Ethernet frames of EtherType 0x88B5 (crates/cc/src/gcca/message.rs)
--   cmprobe   the Congestion Manager's probe protocol (CM paper section 2.2.2, Fig. 5), versions
--             2 and 3, UDP port 4245 at both ends (crates/cc/src/cm/probe.rs, docs/cm-protocol.md)
--   cp        the Coordination Protocol header (Ott et al.), a shim between IPv4 and UDP,
--             IPv4 protocol 253 (crates/cc/src/cp/header.rs)
--   eca       ECA's LOAD and RLOAD (Barham, MSR-TR-2001-100 section IV.A.1), an IPv4 option of
--             type 0x9E (crates/sim/src/trace/eca_option.rs)
--
-- Load it for one run:
--   tshark -X lua_script:wireshark/concord.lua -r trace.pcap -Y gccp
-- or install it for every run (see wireshark/README.md):
--   mkdir -p ~/.local/lib/wireshark/plugins && cp wireshark/concord.lua ~/.local/lib/wireshark/plugins/
--
-- Each decoder is as strict as the Rust one it mirrors: what the Rust decoder refuses is marked
-- with an expert info of group "Malformed" and severity "Error" naming the rule broken, and the
-- fields read before the fault stay in the tree. A message cut by the capture's snap length is
-- decoded as far as it was captured, without an error (the Rust decoders never see a cut).

local ipv4_option_eca = 0x9E

---------------------------------------------------------------------------------------------
-- GCCP (EtherType 0x88B5)
---------------------------------------------------------------------------------------------

local gccp = Proto("gccp", "GCCA Generic Congestion Control Protocol")

local gccp_options_names = { [0] = "no padding", [1] = "padding (edge router to host)" }
local gccp_code_names = { [0] = "NORMAL", [1] = "CONGESTION" }

local gf = {
    vers = ProtoField.uint8("gccp.vers", "VERS", base.DEC),
    len = ProtoField.uint8("gccp.len", "LEN (32-bit words)", base.DEC),
    options = ProtoField.uint8("gccp.options", "OPTIONS", base.DEC, gccp_options_names),
    code = ProtoField.uint8("gccp.code", "CODE", base.DEC, gccp_code_names),
    src = ProtoField.ipv4("gccp.src", "Flow source address"),
    dst = ProtoField.ipv4("gccp.dst", "Flow destination address"),
    srcport = ProtoField.uint16("gccp.srcport", "Flow source port", base.DEC),
    dstport = ProtoField.uint16("gccp.dstport", "Flow destination port", base.DEC),
    trailer = ProtoField.bytes("gccp.trailer", "Link-layer padding"),
}
gccp.fields = { gf.vers, gf.len, gf.options, gf.code, gf.src, gf.dst, gf.srcport, gf.dstport,
    gf.trailer }

local gccp_malformed = ProtoExpert.new("gccp.malformed", "Malformed GCCP message",
    expert.group.MALFORMED, expert.severity.ERROR)
gccp.experts = { gccp_malformed }

-- Mirrors GccpMessage::decode_prefix: the fixed part, VERS, OPTIONS, CODE, LEN against the
-- bytes present, LEN against OPTIONS; bytes after LEN words are the link layer's padding.
function gccp.dissector(tvb, pinfo, tree)
    pinfo.cols.protocol = "GCCP"
    local n = tvb:reported_length_remaining()
    local t = tree:add(gccp, tvb())
    local function bad(msg)
        t:add_proto_expert_info(gccp_malformed, msg)
        pinfo.cols.info = "GCCP malformed: " .. msg
    end
    if n < 4 then
        return bad(string.format("truncated: need 4 bytes, got %d", n))
    end
    local vers = tvb(0, 1):uint()
    local len_words = tvb(1, 1):uint()
    local options = tvb(2, 1):uint()
    local code = tvb(3, 1):uint()
    t:add(gf.vers, tvb(0, 1))
    t:add(gf.len, tvb(1, 1))
    t:add(gf.options, tvb(2, 1))
    t:add(gf.code, tvb(3, 1))
    if vers ~= 1 then
        return bad(string.format("GCCP version %d is not supported (expected 1)", vers))
    end
    if options > 1 then
        return bad(string.format("OPTIONS = %d is not defined (0: no padding, 1: padding)", options))
    end
    if code > 1 then
        return bad(string.format("CODE = %d is not defined (0: NORMAL, 1: CONGESTION)", code))
    end
    if len_words == 0 or len_words * 4 > n then
        return bad(string.format("LEN = %d words but %d bytes are present", len_words, n))
    end
    local expected = (options == 1) and 16 or 4
    if len_words * 4 ~= expected then
        return bad(string.format("OPTIONS = %d does not fit LEN = %d words", options, len_words))
    end
    local info = gccp_code_names[code]
    if options == 1 and tvb:len() >= 16 then
        t:add(gf.src, tvb(4, 4))
        t:add(gf.dst, tvb(8, 4))
        t:add(gf.srcport, tvb(12, 2))
        t:add(gf.dstport, tvb(14, 2))
        info = string.format("%s for flow %s:%d -> %s:%d", info, tostring(tvb(4, 4):ipv4()),
            tvb(12, 2):uint(), tostring(tvb(8, 4):ipv4()), tvb(14, 2):uint())
    end
    t:set_len(expected)
    if tvb:len() > expected then
        tree:add(gf.trailer, tvb(expected))
    end
    pinfo.cols.info = info
    return tvb:len()
end

DissectorTable.get("ethertype"):add(0x88B5, gccp)

---------------------------------------------------------------------------------------------
-- CM probe protocol (UDP port 4245)
---------------------------------------------------------------------------------------------

local cmprobe = Proto("cmprobe", "Congestion Manager probe protocol")

local cm_type_names = { [1] = "probe", [2] = "response" }

local cf = {
    version = ProtoField.uint8("cmprobe.version", "Version", base.DEC),
    type = ProtoField.uint8("cmprobe.type", "Type", base.DEC, cm_type_names, 0x7F),
    authenticated = ProtoField.bool("cmprobe.authenticated", "Authenticated (a tag ends it)", 8,
        nil, 0x80),
    length = ProtoField.uint16("cmprobe.length", "Length (bytes)", base.DEC),
    seq = ProtoField.uint32("cmprobe.seq", "Probe sequence number", base.DEC),
    nonce = ProtoField.uint64("cmprobe.nonce", "Nonce", base.HEX),
    room = ProtoField.uint16("cmprobe.room", "Room (flow entries the response may carry)",
        base.DEC),
    reserved = ProtoField.uint16("cmprobe.reserved", "Reserved", base.DEC),
    padding = ProtoField.bytes("cmprobe.padding", "Padding"),
    tag = ProtoField.bytes("cmprobe.tag", "Tag (HMAC-SHA-256-128)"),
    thisprobe = ProtoField.uint32("cmprobe.thisprobe", "thisprobe", base.DEC),
    lastprobe = ProtoField.uint32("cmprobe.lastprobe", "lastprobe", base.DEC),
    nflows = ProtoField.uint32("cmprobe.nflows", "Flow entries", base.DEC),
    flow = ProtoField.none("cmprobe.flow", "Flow"),
    src_port = ProtoField.uint16("cmprobe.flow.src_port", "Sender's port", base.DEC),
    dst_port = ProtoField.uint16("cmprobe.flow.dst_port", "Receiver's port", base.DEC),
    flow_id = ProtoField.uint32("cmprobe.flow.flow_id", "Flow id", base.DEC),
    packets = ProtoField.uint64("cmprobe.flow.packets", "Packets received (cumulative)", base.DEC),
    ce_packets = ProtoField.uint64("cmprobe.flow.ce_packets", "CE-marked packets (cumulative)",
        base.DEC),
    bytes = ProtoField.uint64("cmprobe.flow.bytes", "Bytes received (cumulative)", base.DEC),
}
cmprobe.fields = { cf.version, cf.type, cf.authenticated, cf.length, cf.seq, cf.nonce, cf.room,
    cf.reserved, cf.padding, cf.tag, cf.thisprobe, cf.lastprobe, cf.nflows, cf.flow, cf.src_port,
    cf.dst_port, cf.flow_id, cf.packets, cf.ce_packets, cf.bytes }

local cm_malformed = ProtoExpert.new("cmprobe.malformed", "Malformed CM probe-protocol message",
    expert.group.MALFORMED, expert.severity.ERROR)
local cm_not_captured = ProtoExpert.new("cmprobe.not_captured",
    "The message's bytes were not captured", expert.group.UNDECODED, expert.severity.NOTE)
local cm_unverified = ProtoExpert.new("cmprobe.unverified",
    "The tag is not verified (the dissector has no key)", expert.group.SECURITY,
    expert.severity.NOTE)
cmprobe.experts = { cm_malformed, cm_not_captured, cm_unverified }

-- The length check of probe.rs's check_length: the length field against the length the type
-- and flow count give, then against the bytes present (n, the datagram's payload).
local function cm_check_length(field, expected, n)
    if field ~= expected then
        return string.format("length field %d does not match the %d bytes the message needs",
            field, expected)
    end
    if n < expected then
        return string.format("truncated: need %d bytes, got %d", expected, n)
    end
    if n > expected then
        return string.format("%d bytes after the end of the message", n - expected)
    end
    return nil
end

-- The flow entries of a response, from byte 24 (versions 2 and 3).
local function cm_flow_entries(tvb, t, nflows)
    for i = 0, nflows - 1 do
        local at = 24 + 32 * i
        if at + 32 > tvb:len() then break end
        local ft = t:add(cf.flow, tvb(at, 32))
        ft:add(cf.src_port, tvb(at, 2))
        ft:add(cf.dst_port, tvb(at + 2, 2))
        ft:add(cf.flow_id, tvb(at + 4, 4))
        ft:add(cf.packets, tvb(at + 8, 8))
        ft:add(cf.ce_packets, tvb(at + 16, 8))
        ft:add(cf.bytes, tvb(at + 24, 8))
        ft:append_text(string.format(" %d->%d#%d: %s packets, %s CE, %s bytes", tvb(at, 2):uint(),
            tvb(at + 2, 2):uint(), tvb(at + 4, 4):uint(), tostring(tvb(at + 8, 8):uint64()),
            tostring(tvb(at + 16, 8):uint64()), tostring(tvb(at + 24, 8):uint64())))
    end
end

-- Version 2: probes of 16 bytes, cumulative per-flow counts in responses. Each version is one
-- entry of cm_versions, a function of the same shape.
local function cm_dissect_v2(tvb, pinfo, t, n, bad)
    local ty = tvb(1, 1):uint()
    local field = tvb(2, 2):uint()
    if ty == 1 then
        if n < 16 then return bad(string.format("truncated: need 16 bytes, got %d", n)) end
        local err = cm_check_length(field, 16, n)
        if err then return bad(err) end
        t:add(cf.seq, tvb(4, 4))
        t:add(cf.nonce, tvb(8, 8))
        pinfo.cols.info = string.format("CM probe seq=%d nonce=0x%s", tvb(4, 4):uint(),
            tvb(8, 8):uint64():tohex())
        return
    end
    if n < 24 then return bad(string.format("truncated: need 24 bytes, got %d", n)) end
    local nflows = tvb(20, 4):uint()
    local expected = 24 + 32 * nflows
    local err = cm_check_length(field, expected, n)
    t:add(cf.thisprobe, tvb(4, 4))
    t:add(cf.lastprobe, tvb(8, 4))
    t:add(cf.nonce, tvb(12, 8))
    t:add(cf.nflows, tvb(20, 4))
    if err then return bad(err) end
    cm_flow_entries(tvb, t, nflows)
    pinfo.cols.info = string.format("CM response thisprobe=%d lastprobe=%d nonce=0x%s, %d flows",
        tvb(4, 4):uint(), tvb(8, 4):uint(), tvb(12, 8):uint64():tohex(), nflows)
end

-- Version 3 (probe.rs today): a probe makes room for the response's flow entries and is padded
-- to half their bytes; type bit 0x80 says an HMAC-SHA-256-128 tag of 16 bytes ends the message.
-- Mirrors ProbeMessage::decode_with without a key, except that a tagged message is shown with
-- its tag unverified rather than refused.
local function cm_dissect_v3(tvb, pinfo, t, n, bad)
    local ty_byte = tvb(1, 1):uint()
    local tagged = bit32.band(ty_byte, 0x80) ~= 0
    local ty = bit32.band(ty_byte, 0x7F)
    local field = tvb(2, 2):uint()
    local tag_len = tagged and 16 or 0
    local fixed = ((ty == 1) and 20 or 24) + tag_len
    if n < fixed then return bad(string.format("truncated: need %d bytes, got %d", fixed, n)) end
    local count, entry
    if ty == 1 then
        count, entry = tvb(16, 2):uint(), 16
    else
        count, entry = tvb(20, 4):uint(), 32
    end
    local expected = fixed + entry * count
    local err = cm_check_length(field, expected, n)
    local body = expected - tag_len
    if ty == 1 then
        t:add(cf.seq, tvb(4, 4))
        t:add(cf.nonce, tvb(8, 8))
        t:add(cf.room, tvb(16, 2))
        t:add(cf.reserved, tvb(18, 2))
        if err then return bad(err) end
        if body > 20 then t:add(cf.padding, tvb(20, body - 20)) end
        for at = 18, body - 1 do
            if tvb(at, 1):uint() ~= 0 then
                return bad(string.format("non-zero padding at byte %d", at))
            end
        end
        pinfo.cols.info = string.format("CM probe seq=%d nonce=0x%s room=%d", tvb(4, 4):uint(),
            tvb(8, 8):uint64():tohex(), count)
    else
        t:add(cf.thisprobe, tvb(4, 4))
        t:add(cf.lastprobe, tvb(8, 4))
        t:add(cf.nonce, tvb(12, 8))
        t:add(cf.nflows, tvb(20, 4))
        if err then return bad(err) end
        cm_flow_entries(tvb, t, count)
        pinfo.cols.info = string.format(
            "CM response thisprobe=%d lastprobe=%d nonce=0x%s, %d flows", tvb(4, 4):uint(),
            tvb(8, 4):uint(), tvb(12, 8):uint64():tohex(), count)
    end
    if tagged then
        local ti = t:add(cf.tag, tvb(body, 16))
        ti:add_proto_expert_info(cm_unverified)
        pinfo.cols.info = tostring(pinfo.cols.info) .. " (authenticated)"
    end
end

local cm_versions = { [2] = cm_dissect_v2, [3] = cm_dissect_v3 }

function cmprobe.dissector(tvb, pinfo, tree)
    pinfo.cols.protocol = "CM probe"
    local n = tvb:reported_length_remaining()
    local t = tree:add(cmprobe, tvb())
    local function cut()
        t:add_proto_expert_info(cm_not_captured,
            string.format("%d of the message's %d bytes were captured", tvb:len(), n))
        pinfo.cols.info = string.format("CM probe protocol, %d bytes (%d captured)", n, tvb:len())
        return tvb:len()
    end
    if tvb:len() < 4 and n >= 4 then
        return cut()
    end
    local function bad(msg)
        t:add_proto_expert_info(cm_malformed, msg)
        pinfo.cols.info = "CM probe protocol malformed: " .. msg
    end
    if n < 4 then
        return bad(string.format("truncated: need 4 bytes, got %d", n))
    end
    t:add(cf.version, tvb(0, 1))
    t:add(cf.type, tvb(1, 1))
    t:add(cf.length, tvb(2, 2))
    local version = tvb(0, 1):uint()
    local ty = tvb(1, 1):uint()
    local dissect = cm_versions[version]
    if dissect == nil then
        return bad(string.format("unsupported version %d", version))
    end
    local base_ty = (version >= 3) and bit32.band(ty, 0x7F) or ty
    if base_ty ~= 1 and base_ty ~= 2 then
        return bad(string.format("unknown message type %d", ty))
    end
    if tvb:len() < n then
        -- Cut by the snap length: the header is all there is to read.
        return cut()
    end
    dissect(tvb, pinfo, t, n, bad)
    return tvb:len()
end

DissectorTable.get("udp.port"):add(4245, cmprobe)

---------------------------------------------------------------------------------------------
-- CP header (IPv4 protocol 253, then UDP unless C is set)
---------------------------------------------------------------------------------------------

local cp = Proto("cp", "Coordination Protocol header")

local CP_PROBE, CP_ECHO, CP_REPORT, CP_ENDPOINT, CP_CONTROL = 0x01, 0x02, 0x04, 0x08, 0x10

local pf = {
    version = ProtoField.uint8("cp.version", "Version", base.DEC),
    flags = ProtoField.uint8("cp.flags", "Flags", base.HEX),
    flag_p = ProtoField.bool("cp.flags.probe", "P (probe)", 8, nil, CP_PROBE),
    flag_e = ProtoField.bool("cp.flags.echo", "E (echo)", 8, nil, CP_ECHO),
    flag_l = ProtoField.bool("cp.flags.report", "L (loss report)", 8, nil, CP_REPORT),
    flag_f = ProtoField.bool("cp.flags.endpoint", "F (feedback to endpoints)", 8, nil, CP_ENDPOINT),
    flag_c = ProtoField.bool("cp.flags.control", "C (control)", 8, nil, CP_CONTROL),
    length = ProtoField.uint16("cp.length", "Header length (bytes)", base.DEC),
    app = ProtoField.uint32("cp.app", "Application id", base.DEC),
    flow = ProtoField.uint32("cp.flow", "Flow id", base.DEC),
    seq = ProtoField.uint32("cp.seq", "Sequence number", base.DEC),
    timestamp = ProtoField.uint32("cp.timestamp", "Timestamp (us)", base.DEC),
    echo_timestamp = ProtoField.uint32("cp.echo.timestamp", "Timestamp echo (us)", base.DEC),
    echo_delay = ProtoField.uint32("cp.echo.delay", "Echo delay (us)", base.DEC),
    through = ProtoField.uint32("cp.report.through", "Settled through (sequence)", base.DEC),
    gaps = ProtoField.uint8("cp.report.gaps", "Gap count", base.DEC),
    reserved = ProtoField.uint8("cp.report.reserved", "Reserved", base.DEC),
    gap_start = ProtoField.uint32("cp.report.gap.start", "Gap start", base.DEC),
    gap_len = ProtoField.uint16("cp.report.gap.len", "Gap length", base.DEC),
    bandwidth = ProtoField.uint32("cp.endpoint.bandwidth", "Available bandwidth (kbit/s x 256)",
        base.DEC),
    loss = ProtoField.uint32("cp.endpoint.loss", "Aggregate loss rate (x 2^31)", base.DEC),
    rtt = ProtoField.uint32("cp.endpoint.rtt", "RTT (us)", base.DEC),
}
cp.fields = { pf.version, pf.flags, pf.flag_p, pf.flag_e, pf.flag_l, pf.flag_f, pf.flag_c,
    pf.length, pf.app, pf.flow, pf.seq, pf.timestamp, pf.echo_timestamp, pf.echo_delay,
    pf.through, pf.gaps, pf.reserved, pf.gap_start, pf.gap_len, pf.bandwidth, pf.loss, pf.rtt }

local cp_malformed = ProtoExpert.new("cp.malformed", "Malformed CP header",
    expert.group.MALFORMED, expert.severity.ERROR)
cp.experts = { cp_malformed }

-- header.rs's length_for: the header length the flags and the gap count imply.
local function cp_length_for(flags, gaps)
    local len = 12
    if bit32.band(flags, CP_PROBE) ~= 0 then len = len + 8 end
    if bit32.band(flags, CP_ECHO) ~= 0 then len = len + 8 end
    if bit32.band(flags, CP_REPORT) ~= 0 then len = len + 6 + 6 * gaps end
    if bit32.band(flags, CP_ENDPOINT) ~= 0 then len = len + 12 end
    return len
end

-- Mirrors CpHeader::decode: fixed part, version, flags, gap count, length field, bytes
-- present, the loss report's reserved byte and gap lengths, the loss rate's range.
function cp.dissector(tvb, pinfo, tree)
    pinfo.cols.protocol = "CP"
    local n = tvb:reported_length_remaining()
    local t = tree:add(cp, tvb())
    local function bad(msg)
        t:add_proto_expert_info(cp_malformed, msg)
        pinfo.cols.info = "CP malformed: " .. msg
    end
    if n < 12 then
        return bad(string.format("CP header truncated: needs 12 bytes, got %d", n))
    end
    local version = tvb(0, 1):uint()
    local flags = tvb(1, 1):uint()
    t:add(pf.version, tvb(0, 1))
    local ft = t:add(pf.flags, tvb(1, 1))
    for _, f in ipairs({ pf.flag_p, pf.flag_e, pf.flag_l, pf.flag_f, pf.flag_c }) do
        ft:add(f, tvb(1, 1))
    end
    t:add(pf.length, tvb(2, 2))
    t:add(pf.app, tvb(4, 4))
    t:add(pf.flow, tvb(8, 4))
    if version ~= 1 then
        return bad(string.format("CP header version %d is not supported (this codec speaks version 1)",
            version))
    end
    local control = bit32.band(flags, CP_CONTROL) ~= 0
    local says = bit32.band(flags, CP_ECHO + CP_REPORT + CP_ENDPOINT) ~= 0
    if bit32.band(flags, 0xE0) ~= 0
        or (control and (bit32.band(flags, CP_PROBE) ~= 0 or not says)) then
        return bad(string.format("CP header flags 0x%02x are invalid", flags))
    end
    local gaps = 0
    if bit32.band(flags, CP_REPORT) ~= 0 then
        local at = cp_length_for(bit32.band(flags, CP_PROBE + CP_ECHO), 0) + 4
        if at + 1 > n then
            return bad(string.format("CP header truncated: needs %d bytes, got %d", at + 1, n))
        end
        gaps = tvb(at, 1):uint()
        if gaps > 16 then
            return bad(string.format("CP header field gap count has the value %d, out of its range",
                gaps))
        end
    end
    local declared = tvb(2, 2):uint()
    local expected = cp_length_for(flags, gaps)
    if declared ~= expected then
        return bad(string.format("CP header length field says %d bytes, the flags imply %d",
            declared, expected))
    end
    if n < expected then
        return bad(string.format("CP header truncated: needs %d bytes, got %d", expected, n))
    end
    t:set_len(expected)
    local at = 12
    local info = string.format("CP app=%d flow=%d", tvb(4, 4):uint(), tvb(8, 4):uint())
    if bit32.band(flags, CP_PROBE) ~= 0 then
        t:add(pf.seq, tvb(at, 4))
        t:add(pf.timestamp, tvb(at + 4, 4))
        info = info .. string.format(" seq=%d", tvb(at, 4):uint())
        at = at + 8
    end
    if bit32.band(flags, CP_ECHO) ~= 0 then
        t:add(pf.echo_timestamp, tvb(at, 4))
        t:add(pf.echo_delay, tvb(at + 4, 4))
        info = info .. " echo"
        at = at + 8
    end
    if bit32.band(flags, CP_REPORT) ~= 0 then
        t:add(pf.through, tvb(at, 4))
        t:add(pf.gaps, tvb(at + 4, 1))
        t:add(pf.reserved, tvb(at + 5, 1))
        if tvb(at + 5, 1):uint() ~= 0 then
            return bad(string.format(
                "CP header field loss report reserved byte has the value %d, out of its range",
                tvb(at + 5, 1):uint()))
        end
        info = info .. string.format(" report through=%d gaps=%d", tvb(at, 4):uint(), gaps)
        at = at + 6
        for _ = 1, gaps do
            t:add(pf.gap_start, tvb(at, 4))
            t:add(pf.gap_len, tvb(at + 4, 2))
            if tvb(at + 4, 2):uint() == 0 then
                return bad("CP header field gap length has the value 0, out of its range")
            end
            at = at + 6
        end
    end
    if bit32.band(flags, CP_ENDPOINT) ~= 0 then
        t:add(pf.bandwidth, tvb(at, 4))
        t:add(pf.loss, tvb(at + 4, 4))
        t:add(pf.rtt, tvb(at + 8, 4))
        local loss = tvb(at + 4, 4):uint()
        if loss > 2147483648 then
            return bad(string.format(
                "CP header field aggregate loss rate has the value %d, out of its range", loss))
        end
        info = info .. string.format(" feedback %.3f Mbit/s loss %.4f rtt %d us",
            tvb(at, 4):uint() * 1000 / 256 / 1e6, loss / 2147483648, tvb(at + 8, 4):uint())
        at = at + 12
    end
    if control then
        info = info .. " (control)"
    end
    pinfo.cols.info = info
    -- The transport header follows, unless this is a control message.
    if not control and at < tvb:len() then
        Dissector.get("udp"):call(tvb(at):tvb(), pinfo, tree)
    end
    return tvb:len()
end

DissectorTable.get("ip.proto"):add(253, cp)

---------------------------------------------------------------------------------------------
-- ECA LOAD / RLOAD (IPv4 option 0x9E: type, length 10, LOAD and RLOAD as IEEE 754 binary32)
---------------------------------------------------------------------------------------------

local eca = Proto("eca", "ECA load fields")

local ef = {
    load = ProtoField.float("eca.load", "LOAD"),
    rload = ProtoField.float("eca.rload", "RLOAD"),
    load_raw = ProtoField.uint32("eca.load.raw", "LOAD (binary32 bits)", base.HEX),
    rload_raw = ProtoField.uint32("eca.rload.raw", "RLOAD (binary32 bits)", base.HEX),
    len = ProtoField.uint8("eca.option.len", "Option length", base.DEC),
}
eca.fields = { ef.load, ef.rload, ef.load_raw, ef.rload_raw, ef.len }

local eca_malformed = ProtoExpert.new("eca.malformed", "Malformed ECA load option",
    expert.group.MALFORMED, expert.severity.ERROR)
eca.experts = { eca_malformed }

local ip_field = Field.new("ip")

-- Walks the options of each IPv4 header of the frame (RFC 791 section 3.1: EOL ends the list,
-- NOP is one byte, every other option is type, length, data).
function eca.dissector(tvb, pinfo, tree)
    for _, fi in ipairs({ ip_field() }) do
        local r = fi.range
        if r ~= nil and r:len() > 20 then
            local ihl = bit32.band(r(0, 1):uint(), 0x0f) * 4
            local at = 20
            local stop = math.min(ihl, r:len())
            while at < stop do
                local ty = r(at, 1):uint()
                if ty == 0 then break end
                if ty == 1 then
                    at = at + 1
                else
                    if at + 1 >= stop then break end
                    local len = r(at + 1, 1):uint()
                    if ty == ipv4_option_eca then
                        local t = tree:add(eca, r(at, math.max(2, math.min(len, stop - at))))
                        t:add(ef.len, r(at + 1, 1))
                        if len ~= 10 or at + 10 > stop then
                            t:add_proto_expert_info(eca_malformed,
                                string.format("option length %d, expected 10", len))
                        else
                            t:add(ef.load, r(at + 2, 4))
                            t:add(ef.rload, r(at + 6, 4))
                            t:add(ef.load_raw, r(at + 2, 4))
                            t:add(ef.rload_raw, r(at + 6, 4))
                            t:append_text(string.format(": LOAD %g, RLOAD %g", r(at + 2, 4):float(),
                                r(at + 6, 4):float()))
                        end
                    end
                    if len < 2 then break end
                    at = at + len
                end
            end
        end
    end
end

register_postdissector(eca)
