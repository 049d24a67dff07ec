-- Wireshark dissector for the SprayNIC spray transport, written from docs/PROTOCOL.md alone (S2.5, S2.6,
-- S3.1-S3.3, S4.1, S5.1-S5.6). Spray packets are RoCEv2 packets with BTH opcodes 0xC0-0xDF, so this dissector
-- takes UDP port 4791 over from the built-in InfiniBand (RRoCE) dissector and hands it every other opcode.
--
--   tshark -X lua_script:tools/decoders/spray.lua -r capture.pcapng -T fields -e spray.seth.msn ...
--   wireshark -X lua_script:tools/decoders/spray.lua capture.pcapng
--
-- Fields: spray.name, spray.error (the reason of S3.1 when the packet is malformed), spray.bth.<field>,
-- spray.<header>.<field> with the names of PROTOCOL.md's tables (seth, reth, immdt, sackh, prbh, nakh, conh,
-- hsb, address), spray.payload_length, spray.icrc, spray.icrc_valid, and the SETH flags' bits (S4.1) as
-- spray.seth.retransmit, spray.seth.last and spray.seth.attempt (the RNR attempt, S9.3-3). A field is added only when it lies wholly
-- before the ICRC; the handshake block and the address list only when pad and payload length are valid. A
-- malformed packet gets one expert info (PI_MALFORMED) naming the reason, and only then.

local ROCE_V2_PORT = 4791
local BTH_LENGTH = 12
local ICRC_LENGTH = 4

-- "spray" is taken (Sun RPC SPRAY): the protocol is "spraynic", its fields keep the "spray." names of PROTOCOL.md
local spray = Proto("spraynic", "SprayNIC spray transport")

-- S2.5 types: u8..u32 numbers, u64, bytes
local function field(proto_name, name, type, size)
    local abbrev = "spray." .. proto_name .. "." .. name
    local pf
    if type == "u8" then pf = ProtoField.uint8(abbrev, name, base.DEC)
    elseif type == "u16" then pf = ProtoField.uint16(abbrev, name, base.DEC)
    elseif type == "u24" then pf = ProtoField.uint24(abbrev, name, base.DEC)
    elseif type == "u32" then pf = ProtoField.uint32(abbrev, name, base.DEC)
    elseif type == "u64" then pf = ProtoField.uint64(abbrev, name, base.DEC)
    else pf = ProtoField.bytes(abbrev, name) end
    return { name = name, type = type, size = size, pf = pf }
end

local function header(name, rows)
    -- the header's subtree: a field of its own, so that tshark -T json names it spray.<header>
    local h = { name = name, fields = {}, length = 0, pf = ProtoField.none("spray." .. name, name:upper()) }
    for _, row in ipairs(rows) do
        local f = field(name, row[1], row[2], row[3])
        f.offset = h.length
        h.length = h.length + row[3]
        table.insert(h.fields, f)
    end
    return h
end

-- the tables of PROTOCOL.md, in offset order (each field follows the previous one, S2.5)
local SETH = header("seth", { { "path", "u8", 1 }, { "flags", "u8", 1 }, { "stream", "u16", 2 }, { "msn", "u32", 4 },
    { "offset", "u32", 4 }, { "length", "u32", 4 }, { "rsn", "u32", 4 }, { "messageTag", "u64", 8 } })
local RETH = header("reth", { { "va", "u64", 8 }, { "rkey", "u32", 4 }, { "length", "u32", 4 } })
local IMMDT = header("immdt", { { "immediate", "u32", 4 } })
local SACKH = header("sackh", { { "path", "u8", 1 }, { "flags", "u8", 1 }, { "ceCount", "u16", 2 },
    { "duplicates", "u8", 1 }, { "cumulativePsn", "u24", 3 }, { "sack", "bytes", 32 }, { "rateHint", "u32", 4 },
    { "ackSequence", "u32", 4 }, { "refusals", "u32", 4 }, { "tag", "u64", 8 } })
local PRBH = header("prbh", { { "path", "u8", 1 }, { "flags", "u8", 1 }, { "reserved2", "u16", 2 },
    { "reserved4", "u8", 1 }, { "nextPsn", "u24", 3 }, { "tag", "u64", 8 } })
local NAKH = header("nakh", { { "syndrome", "u8", 1 }, { "reason", "u8", 1 }, { "stream", "u16", 2 },
    { "msn", "u32", 4 }, { "rnrTimerMicros", "u32", 4 }, { "refusal", "u32", 4 }, { "tag", "u64", 8 } })
local CONH = header("conh", { { "version", "u8", 1 }, { "flags", "u8", 1 }, { "paths", "u8", 1 }, { "planes", "u8", 1 },
    { "mtu", "u16", 2 }, { "streams", "u16", 2 }, { "reserved8", "u8", 1 }, { "senderCid", "u24", 3 },
    { "reserved12", "u8", 1 }, { "initialPsn", "u24", 3 }, { "ingressMbps", "u32", 4 }, { "token", "u64", 8 },
    { "reason", "u8", 1 }, { "reads", "u8", 1 }, { "window", "u16", 2 }, { "tag", "u64", 8 } })
local HSB = header("hsb", { { "cookie", "bytes", 16 }, { "publicKey", "bytes", 32 }, { "proof", "bytes", 16 } })
local ADDRESS = header("address", { { "flags", "u8", 1 }, { "reserved1", "u8", 1 }, { "mac", "bytes", 6 },
    { "address", "bytes", 16 } })
local ADDRESSES_FLAG = 0x01

-- S3.1: opcode -> name, headers after the BTH, payload kind
local OPCODES = {
    [0xC0] = { "SPRAY_WRITE", { SETH, RETH }, "data" },
    [0xC1] = { "SPRAY_WRITE_IMM", { SETH, RETH, IMMDT }, "data" },
    [0xC2] = { "SPRAY_SEND", { SETH }, "data" },
    [0xC3] = { "SPRAY_SEND_IMM", { SETH, IMMDT }, "data" },
    [0xC4] = { "SPRAY_READ_REQUEST", { SETH, RETH }, "none" },
    [0xC5] = { "SPRAY_READ_RESPONSE", { SETH }, "data" },
    [0xC6] = { "SPRAY_CONNECT_RETRY", { CONH }, "hsb" },
    [0xC7] = { "SPRAY_CONNECT_REJECT", { CONH }, "none" },
    [0xC8] = { "SPRAY_ACK", { SACKH }, "none" },
    [0xC9] = { "SPRAY_PROBE", { PRBH }, "none" },
    [0xCA] = { "SPRAY_NACK", { NAKH }, "none" },
    [0xCB] = { "SPRAY_QUERY", { NAKH }, "none" },
    [0xCC] = { "SPRAY_CONNECT", { CONH }, "hsb+addresses" },
    [0xCD] = { "SPRAY_CONNECT_ACK", { CONH }, "hsb" },
    [0xCE] = { "SPRAY_CLOSE", { CONH }, "none" },
    [0xCF] = { "SPRAY_CLOSE_ACK", { CONH }, "none" },
}

local pf_bth = ProtoField.none("spray.bth", "BTH")
local pf_name = ProtoField.string("spray.name", "Packet")
local pf_error = ProtoField.string("spray.error", "Malformed")
local pf_payload_length = ProtoField.uint32("spray.payload_length", "Payload length", base.DEC)
local pf_icrc = ProtoField.bytes("spray.icrc", "ICRC")
local pf_icrc_valid = ProtoField.bool("spray.icrc_valid", "ICRC valid")
-- S3.2, InfiniBand's bit numbering
local bth = {
    opcode = ProtoField.uint8("spray.bth.opcode", "OpCode", base.HEX),
    se = ProtoField.bool("spray.bth.se", "Solicited event", 8, nil, 0x80),
    m = ProtoField.bool("spray.bth.m", "MigReq", 8, nil, 0x40),
    padCount = ProtoField.uint8("spray.bth.padCount", "Pad count", base.DEC, nil, 0x30),
    tver = ProtoField.uint8("spray.bth.tver", "TVer", base.DEC, nil, 0x0F),
    pkey = ProtoField.uint16("spray.bth.pkey", "P_Key", base.HEX),
    resv8a = ProtoField.uint8("spray.bth.resv8a", "resv8a", base.HEX),
    destQp = ProtoField.uint24("spray.bth.destQp", "DestQP (CID)", base.DEC),
    ackReq = ProtoField.bool("spray.bth.ackReq", "AckReq", 8, nil, 0x80),
    resv7 = ProtoField.uint8("spray.bth.resv7", "resv7", base.HEX, nil, 0x7F),
    psn = ProtoField.uint24("spray.bth.psn", "PSN", base.DEC),
}
-- S4.1: the SETH flags byte's bits, shown under it (bits 5-7 are reserved)
local seth_bits = {
    retransmit = ProtoField.bool("spray.seth.retransmit", "RETRANSMIT", 8, nil, 0x01),
    last = ProtoField.bool("spray.seth.last", "LAST", 8, nil, 0x02),
    attempt = ProtoField.uint8("spray.seth.attempt", "attempt", base.DEC, nil, 0x1C),
}
local ef_malformed = ProtoExpert.new("spray.malformed", "Malformed spray packet", expert.group.MALFORMED,
    expert.severity.ERROR)

local all_fields = { pf_bth, pf_name, pf_error, pf_payload_length, pf_icrc, pf_icrc_valid }
for _, pf in pairs(bth) do table.insert(all_fields, pf) end
for _, pf in pairs(seth_bits) do table.insert(all_fields, pf) end
for _, h in ipairs({ SETH, RETH, IMMDT, SACKH, PRBH, NAKH, CONH, HSB, ADDRESS }) do
    table.insert(all_fields, h.pf)
    for _, f in ipairs(h.fields) do table.insert(all_fields, f.pf) end
end
spray.fields = all_fields
spray.experts = { ef_malformed }

local ip_field = Field.new("ip")
local ipv6_field = Field.new("ipv6")
local udp_field = Field.new("udp")

-- S2.6: CRC-32 as zlib's, table-driven
local CRC_TABLE = {}
for i = 0, 255 do
    local c = i
    for _ = 1, 8 do
        if bit32.band(c, 1) ~= 0 then c = bit32.bxor(0xEDB88320, bit32.rshift(c, 1)) else c = bit32.rshift(c, 1) end
    end
    CRC_TABLE[i] = c
end

local function crc_bytes(crc, bytes, from, to, masked)
    for i = from, to do
        local b = masked[i] or bytes:get_index(i)
        crc = bit32.bxor(CRC_TABLE[bit32.band(bit32.bxor(crc, b), 0xFF)], bit32.rshift(crc, 8))
    end
    return crc
end

-- the ICRC wire bytes as a 32-bit number read little-endian, or nil when the IP header cannot be found
local function icrc(tvb, udp_length)
    local ip = ip_field()
    local ipv6 = ipv6_field()
    local udp = udp_field()
    if udp == nil or (ip == nil and ipv6 == nil) then return nil end
    local crc = 0xFFFFFFFF
    crc = crc_bytes(crc, ByteArray.new("ffffffffffffffff"), 0, 7, {})
    if ip ~= nil then
        local header = ip.range:bytes()
        crc = crc_bytes(crc, header, 0, header:len() - 1, { [1] = 0xFF, [8] = 0xFF, [10] = 0xFF, [11] = 0xFF })
    else
        local header = ipv6.range:bytes()
        local first = bit32.bor(header:get_index(0), 0x0F)
        crc = crc_bytes(crc, header, 0, 39, { [0] = first, [1] = 0xFF, [2] = 0xFF, [3] = 0xFF, [7] = 0xFF })
    end
    local udp_header = udp.range:bytes()
    crc = crc_bytes(crc, udp_header, 0, 7, { [6] = 0xFF, [7] = 0xFF })
    local rest = tvb:range(0, udp_length - ICRC_LENGTH):bytes()
    crc = crc_bytes(crc, rest, 0, rest:len() - 1, { [4] = 0xFF })
    return bit32.bnot(crc)
end

local function header_length(headers)
    local n = 0
    for _, h in ipairs(headers) do n = n + h.length end
    return n
end

-- S3.1's reasons in its order (the ICRC outranks them, judged by the caller)
local function classify(opcode, tver, pad, length)
    if tver ~= 0 then return "BAD_TVER" end
    local op = OPCODES[opcode]
    if op == nil then return "UNKNOWN_OPCODE" end
    local padded = length - BTH_LENGTH - ICRC_LENGTH - header_length(op[2])
    if padded < 0 then return "TRUNCATED_EXTENSION_HEADER" end
    if op[3] == "none" then
        if pad ~= 0 then return "BAD_PAD_COUNT" end
        if padded ~= 0 then return "BAD_PAYLOAD_LENGTH" end
        return nil
    end
    if pad > padded then return "BAD_PAD_COUNT" end
    if padded % 4 ~= 0 then return "BAD_PAYLOAD_LENGTH" end
    return nil
end

-- adds the fields of header h at `at` that end at or before `limit`; returns the values of u8 fields by name
local function add_header(tree, tvb, h, at, limit)
    local subtree = tree:add(h.pf, tvb:range(math.min(at, limit), math.max(0, math.min(h.length, limit - at))))
    local values = {}
    for _, f in ipairs(h.fields) do
        if at + f.offset + f.size > limit then break end
        local range = tvb:range(at + f.offset, f.size)
        local item = subtree:add(f.pf, range)
        if h == SETH and f.name == "flags" then
            item:add(seth_bits.retransmit, range)
            item:add(seth_bits.last, range)
            item:add(seth_bits.attempt, range)
        end
        if f.type == "u8" then values[f.name] = range:uint() end
    end
    return values
end

local original = DissectorTable.get("udp.port"):get_dissector(ROCE_V2_PORT)

function spray.dissector(tvb, pinfo, tree)
    local length = tvb:len()
    if length < 1 or bit32.rshift(tvb:range(0, 1):uint(), 5) ~= 6 then
        if original == nil then return 0 end
        -- the InfiniBand dissector reports its own malformed packets; its exception must not become a Lua error
        local ok, consumed = pcall(original.call, original, tvb, pinfo, tree)
        return ok and consumed or length
    end
    pinfo.cols.protocol = "SPRAY"
    local root = tree:add(spray, tvb:range(0, length))
    if length < BTH_LENGTH + ICRC_LENGTH then
        root:add(pf_error, "TRUNCATED_BTH")
        root:add_proto_expert_info(ef_malformed, "TRUNCATED_BTH")
        return length
    end
    local opcode = tvb:range(0, 1):uint()
    local flags = tvb:range(1, 1):uint()
    local pad = bit32.band(bit32.rshift(flags, 4), 3)
    local tver = bit32.band(flags, 0x0F)
    local bth_tree = root:add(pf_bth, tvb:range(0, BTH_LENGTH))
    bth_tree:add(bth.opcode, tvb:range(0, 1))
    bth_tree:add(bth.se, tvb:range(1, 1))
    bth_tree:add(bth.m, tvb:range(1, 1))
    bth_tree:add(bth.padCount, tvb:range(1, 1))
    bth_tree:add(bth.tver, tvb:range(1, 1))
    bth_tree:add(bth.pkey, tvb:range(2, 2))
    bth_tree:add(bth.resv8a, tvb:range(4, 1))
    bth_tree:add(bth.destQp, tvb:range(5, 3))
    bth_tree:add(bth.ackReq, tvb:range(8, 1))
    bth_tree:add(bth.resv7, tvb:range(8, 1))
    bth_tree:add(bth.psn, tvb:range(9, 3))

    local received = tvb:range(length - ICRC_LENGTH, ICRC_LENGTH)
    root:add(pf_icrc, received)
    local computed = icrc(tvb, length)
    local icrc_valid = computed == nil or computed == received:le_uint()
    root:add(pf_icrc_valid, icrc_valid)
    local reason = classify(opcode, tver, pad, length)
    if not icrc_valid then reason = "BAD_ICRC" end

    local op = OPCODES[opcode]
    local limit = length - ICRC_LENGTH
    if op ~= nil then
        root:add(pf_name, op[1])
        pinfo.cols.info = op[1]
        local at = BTH_LENGTH
        local conh = nil
        for _, h in ipairs(op[2]) do
            local values = add_header(root, tvb, h, at, limit)
            if h == CONH then conh = values end
            at = at + h.length
        end
        if tver == 0 and classify(opcode, 0, pad, length) == nil then
            local payload_length = limit - at - pad
            root:add(pf_payload_length, payload_length)
            if op[3]:sub(1, 3) == "hsb" then
                local payload_end = at + payload_length
                add_header(root, tvb, HSB, at, payload_end)
                if op[3] == "hsb+addresses" and bit32.band(conh.flags, ADDRESSES_FLAG) ~= 0 then
                    local fit = math.floor(math.max(0, payload_length - HSB.length) / ADDRESS.length)
                    for i = 0, math.min(conh.planes, fit) - 1 do
                        add_header(root, tvb, ADDRESS, at + HSB.length + i * ADDRESS.length, payload_end)
                    end
                end
            end
        end
    end
    if reason ~= nil then
        root:add(pf_error, reason)
        root:add_proto_expert_info(ef_malformed, reason)
    end
    return length
end

DissectorTable.get("udp.port"):add(ROCE_V2_PORT, spray)
