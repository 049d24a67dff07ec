package io.spraynic.conformance;

import java.io.IOException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;

/**
 * The suite as a serving peer of one spray connection, so that an implementation's initiator completes a transfer
 * with code that is not its own: the responder's handshake (S9.1 steps 3 and 5: RETRY with a cookie, CONNECT_ACK,
 * keys of S12.2 without a pre-shared key), WRITEs placed into a heap region and READs answered from it, every data
 * packet and probe acknowledged at once (S6.4), and the sender's side of S6.5-S6.7 for its READ responses
 * (retransmission of what the peer's ACKs show missing, with the original PSN and {@code RETRANSMIT}; a timer for a
 * lost tail). A share of what it receives and of what it sends is dropped at random (seeded), to make the peer
 * recover; what the peer sends again is recorded so that the retransmission rules can be judged. Written from
 * docs/PROTOCOL.md only. Control path, single-threaded: allocates freely.
 */
final class ScriptedResponder
{
    private static final SecureRandom SECURE = new SecureRandom();
    private static final int MAX_PATHS = 4;
    private static final int MAX_MTU = 1024;
    private static final int WINDOW = 32;
    private static final long TAIL_NANOS = 30 * ScriptedPeer.MILLI;

    private final UdpLink link;
    private final SplittableRandom random;
    private final double lossIn;
    private final double lossOut;
    final byte[] region;
    final long regionBase;
    final int rkey;
    private final byte[] cookie = new byte[16];
    private final HandshakeKeys keys = HandshakeKeys.generate();
    final int cid = 1 + SECURE.nextInt(0xFF_FFFE);
    private final int initialPsn = SECURE.nextInt(SprayWire.PSN_MASK + 1);

    int peerCid;
    private long token;
    private byte[] connectAck;
    int paths;
    int mtu;
    private long[] sendKey;
    private long[] receiveKey;
    private ReceiveWindows inbound;
    private int[] peerAckSequence;
    private int[] nextPsn;
    private List<TreeMap<Integer, Outbound>> outstanding;
    private final ArrayDeque<Outbound> pending = new ArrayDeque<>();
    /** READs answered, by (stream, MSN): a READ_REQUEST sent again (moved to another path, S7.4.1) is answered once. */
    private final Set<Long> answered = new HashSet<>();
    private int[] highestSent;
    private int nextPath;
    private long lastProgress = System.nanoTime();
    boolean closed;

    // what the suite observed of the peer
    /** Violations of one kind kept for the report. */
    static final int MAX_VIOLATIONS_OF_A_KIND = 8;
    /** READ response packets queued at most: a target asking for more is told no (a violation), not queued. */
    static final int MAX_PENDING_RESPONSES = 65_536;
    /** Dropped data packets remembered at most (a drop is remembered before its tag is checked). */
    static final int MAX_DROPPED_KEPT = 1 << 20;

    /** (path, PSN) of every data packet received and kept: the (stream, MSN, offset) it carried. */
    private final Map<Long, Long> firstSeen = new HashMap<>();
    /** (stream, MSN, offset) of every data packet kept. */
    private final Set<Long> received = new HashSet<>();
    /** (stream, MSN, offset) of data packets the suite dropped and has not seen again. */
    final Set<Long> droppedUnrecovered = new HashSet<>();
    int dataDropped;
    int dataRepeated;
    int dataMovedBack;
    int responsesSent;
    int responsesDropped;
    int responsesRetransmitted;
    long bytesWritten;
    long bytesRead;
    final List<String> violations = new ArrayList<>();
    /** Violations of a kind past the first {@link #MAX_VIOLATIONS_OF_A_KIND}: counted, not kept. */
    int violationsNotKept;
    private final Map<String, Integer> violationsOfKind = new HashMap<>();

    // S9.3-4: the first WRITE's first attempt refused RNR (NO_RESOURCES, S10.2-5), to judge the sender's retry
    /** The refused attempt's rnrTimerMicros; 0: nothing is refused. */
    private int rnrTimerMicros;
    /** Refusals this end made on the connection (S9.3.1): every ACK carries the count. */
    private int refusals;
    /** (stream, MSN) of the refused WRITE, or -1. */
    private long refusedKey = -1;
    private int refusedRsn;
    private int refusedLength;
    private long nackSentAt;
    /** Offsets of the refused attempt received (and acknowledged at once, S6.4). */
    private final Set<Integer> refusedOffsets = new HashSet<>();
    /** The refused WRITE came again as its next attempt. */
    boolean retried;
    /** Bytes of the refused WRITE placed from its later attempts (S10.2-5: the retry completes it). */
    long retryBytesPlaced;
    /** The CONNECT the connection was set up from (S10.2-3: the limits the peer advertised), or null. */
    Packet acceptedConnect;

    // S10.2-4: the window this end advertises, and the peer's WRITEs received in part (a sender cannot have
    // completed a message before every byte of it reached this end and was acknowledged, which follows at once)
    /** The inbound message window and READ limit the CONNECT_ACK advertises (0: not advertised). */
    private int advertisedWindow;
    private int advertisedReads;
    /** (stream, MSN) of each WRITE with a packet received and not every byte: bytes received so far. */
    private final Map<Long, Long> openWrites = new HashMap<>();
    /** The most WRITEs open at once, and how many WRITEs the peer sent. */
    int mostOpenWrites;
    int writesStarted;
    private final Set<Long> completedWrites = new HashSet<>();
    /** The most open WRITEs already reported as a violation. */
    private int reportedOpen;

    /** One READ_RESPONSE packet this end owes: its bytes (before the ICRC) and where it went. */
    private static final class Outbound
    {
        byte[] body;
        int path;
        int psn;
        long sentAt;
        /** S6.6: the highest PSN (as a distance) sent on the path when this went last; an ACK above it shows it lost. */
        int mark;
    }

    ScriptedResponder(final UdpLink link, final int regionBytes, final double lossIn, final double lossOut, final long seed)
    {
        this.link = link;
        this.random = new SplittableRandom(seed);
        this.lossIn = lossIn;
        this.lossOut = lossOut;
        this.region = new byte[regionBytes];
        this.regionBase = 1L << 32;
        this.rkey = 0x5A17;
        SECURE.nextBytes(cookie);
    }

    boolean established()
    {
        return null != sendKey;
    }

    /**
     * Refuses the first attempt of the first WRITE the peer sends, RNR {@code NO_RESOURCES} with {@code timerMicros}
     * (S10.2-1), acknowledging its packets without placing them; its retry is judged (S9.3-4) and placed.
     */
    ScriptedResponder refuseFirstWrite(final int timerMicros)
    {
        this.rnrTimerMicros = timerMicros;
        return this;
    }

    /**
     * Advertises {@code window} and {@code reads} in the CONNECT_ACK (S10.2-3), and judges that the peer never has
     * more WRITEs open than {@code window} (S10.2-4).
     */
    ScriptedResponder advertise(final int window, final int reads)
    {
        this.advertisedWindow = window;
        this.advertisedReads = reads;
        return this;
    }

    int advertisedWindow()
    {
        return advertisedWindow;
    }

    /** @return the length of the refused WRITE (0: none refused). */
    int refusedLength()
    {
        return refusedLength;
    }

    /** @return whether a WRITE was refused RNR. */
    boolean refusedWrite()
    {
        return refusedKey >= 0;
    }

    /** Serves until the peer closes the connection or {@code timeoutNanos} pass. */
    void serve(final long timeoutNanos) throws IOException
    {
        final long deadline = System.nanoTime() + timeoutNanos;
        while (!closed && System.nanoTime() < deadline)
        {
            final Packet p = link.receive(2 * ScriptedPeer.MILLI);
            if (null != p)
            {
                handle(p);
            }
            tick();
        }
    }

    private void handle(final Packet p) throws IOException
    {
        if (!p.icrcValid || !p.wholeHeaders())
        {
            return;
        }
        if (p.opcode() == SprayWire.CONNECT && p.destQp() == 0)
        {
            onConnect(p);
            return;
        }
        if (!established() || p.destQp() != cid || random.nextDouble() < lossIn)
        {
            if (established() && p.destQp() == cid && SprayWire.isData(p.opcode()))
            {
                dataDropped++;
                if (!received.contains(content(p)) && droppedUnrecovered.size() < MAX_DROPPED_KEPT)
                {
                    droppedUnrecovered.add(content(p));
                }
            }
            return;
        }
        switch (p.opcode())
        {
            case SprayWire.WRITE, SprayWire.WRITE_IMM, SprayWire.SEND, SprayWire.SEND_IMM, SprayWire.READ_REQUEST ->
                onData(p);
            case SprayWire.PROBE -> onProbe(p);
            case SprayWire.ACK -> onAck(p);
            case SprayWire.CLOSE -> onClose(p);
            case SprayWire.QUERY -> onQuery(p);
            case SprayWire.NACK -> violation("the peer sent a NACK: " + p);
            default ->
            {
            }
        }
    }

    private void onConnect(final Packet p) throws IOException
    {
        if (p.h8(0) != SprayWire.VERSION || p.length() < SprayWire.BTH_LENGTH + SprayWire.CONH_LENGTH +
            SprayWire.HSB_LENGTH + SprayWire.ICRC_LENGTH)
        {
            return;
        }
        if (!Arrays.equals(p.hBytes(SprayWire.CONH_LENGTH, 16), cookie))
        {
            send(conh(SprayWire.CONNECT_RETRY, p.h24(9), 0, 0, 0, 0, p.h64(20)).bytes(cookie).zeros(48).bytes());
            return;
        }
        if (null != connectAck)
        {
            if (p.h64(20) == token && p.h24(9) == peerCid)
            {
                send(connectAck);
            }
            return;
        }
        acceptedConnect = p;
        peerCid = p.h24(9);
        token = p.h64(20);
        paths = Math.min(MAX_PATHS, p.h8(2));
        mtu = Math.min(MAX_MTU, p.h16(4));
        final int streams = Math.min(p.h16(6) == 0 ? 65_536 : p.h16(6), 256);
        final byte[] theirPublic = p.hBytes(SprayWire.CONH_LENGTH + 16, HandshakeKeys.PUBLIC_KEY_LENGTH);
        final byte[] shared = keys.shared(theirPublic);
        if (null == shared || paths < 1 || mtu < 1)
        {
            violation("an unusable CONNECT: " + p);
            return;
        }
        final long[][] k = HandshakeKeys.derive(shared, theirPublic, keys.publicKey, peerCid, cid, token, null);
        receiveKey = k[0];
        sendKey = k[1];
        inbound = new ReceiveWindows(paths, p.h24(13));
        peerAckSequence = new int[paths];
        nextPsn = new int[paths];
        highestSent = new int[paths];
        outstanding = new ArrayList<>();
        for (int i = 0; i < paths; i++)
        {
            nextPsn[i] = (initialPsn + i * SprayWire.PATH_PSN_STRIDE) & SprayWire.PSN_MASK;
            outstanding.add(new TreeMap<>());
        }
        connectAck = conh(SprayWire.CONNECT_ACK, peerCid, paths, mtu, streams, initialPsn, token).zeros(16)
            .bytes(keys.publicKey).zeros(16).bytes();
        connectAck[SprayWire.BTH_LENGTH + SprayWire.CONH_READS] = (byte)advertisedReads;
        connectAck[SprayWire.BTH_LENGTH + SprayWire.CONH_WINDOW] = (byte)(advertisedWindow >> 8);
        connectAck[SprayWire.BTH_LENGTH + SprayWire.CONH_WINDOW + 1] = (byte)advertisedWindow;
        send(connectAck);
    }

    private FrameBuilder conh(final int opcode, final int destQp, final int paths, final int mtu, final int streams,
        final int psn, final long token)
    {
        return FrameBuilder.bth(opcode, destQp, 0, false).u8(SprayWire.VERSION).u8(0).u8(paths).u8(1).u16(mtu)
            .u16(streams & 0xFFFF).u8(0).u24(opcode == SprayWire.CONNECT_RETRY ? 0 : cid).u8(0).u24(psn).u32(10_000)
            .u64(token).u8(0).zeros(3).u64(0);
    }

    private void onData(final Packet p) throws IOException
    {
        final int path = p.h8(0);
        if (path >= paths)
        {
            violation("a data packet on path " + path + " of " + paths + ": " + p);
            return;
        }
        final int opcode = p.opcode();
        final boolean reth = opcode == SprayWire.WRITE || opcode == SprayWire.WRITE_IMM || opcode == SprayWire.READ_REQUEST;
        final long va = reth ? p.h64(SprayWire.SETH_LENGTH) : 0;
        final int offset = p.h32(8);
        final int length = p.h32(12);
        final int theirRkey = reth ? p.h32(SprayWire.SETH_LENGTH + 8) : 0;
        final int immediateAt = SprayWire.SETH_LENGTH + (reth ? SprayWire.RETH_LENGTH : 0);
        final long immediate = opcode == SprayWire.WRITE_IMM || opcode == SprayWire.SEND_IMM ?
            p.h32(immediateAt) & 0xFFFF_FFFFL : 0;
        final long tag = SprayWire.messageTag(receiveKey, opcode, SprayWire.attempt(p), p.h16(2), p.h32(4), length,
            p.h32(16), reth ? va - Integer.toUnsignedLong(offset) : 0, theirRkey, cid, (int)immediate);
        if (tag != p.h64(20))
        {
            violation("a message tag that does not verify (S12.4-2): " + p);
            return;
        }
        final long at = (long)path << 24 | p.psn();
        final long content = content(p);
        droppedUnrecovered.remove(content);
        final boolean refused = refusedAttempt(p, opcode, offset, length);
        final boolean newContent = !refused && received.add(content);
        if (opcode == SprayWire.WRITE || opcode == SprayWire.WRITE_IMM)
        {
            countOpen((long)p.h16(2) << 32 | (p.h32(4) & 0xFFFF_FFFFL), newContent ? p.payload().length : 0, length);
        }
        final Long before = firstSeen.putIfAbsent(at, content);
        if (null != before)
        {
            dataRepeated++;
            if ((p.h8(1) & SprayWire.SETH_RETRANSMIT) == 0)
            {
                violation("PSN " + p.psn() + " of path " + path + " came again without RETRANSMIT (S6.6-1)");
            }
            if (before != content)
            {
                violation("PSN " + p.psn() + " of path " + path + " came again with another message or offset");
            }
        }
        else if ((p.h8(1) & SprayWire.SETH_RETRANSMIT) != 0)
        {
            dataMovedBack++;
        }
        final boolean fresh = inbound.record(path, p.psn());
        if (refused)
        {
            if (fresh)
            {
                refusedOffsets.add(offset);
            }
            sendRnrNack(p.h16(2), p.h32(4)); // S9.3: ahead of the ACK that covers the packet
        }
        else if (fresh && newContent && (opcode == SprayWire.WRITE || opcode == SprayWire.WRITE_IMM))
        {
            final byte[] payload = p.payload();
            final long into = va - regionBase;
            if (theirRkey != rkey || into < 0 || into + payload.length > region.length)
            {
                violation("a WRITE outside the published region: " + p);
            }
            else
            {
                System.arraycopy(payload, 0, region, (int)into, payload.length);
                bytesWritten += payload.length;
                if (refusedKey == ((long)p.h16(2) << 32 | (p.h32(4) & 0xFFFF_FFFFL)))
                {
                    retryBytesPlaced += payload.length;
                }
            }
        }
        sendAck(path);
        if (fresh && opcode == SprayWire.READ_REQUEST && answered.add((long)p.h16(2) << 32 | (p.h32(4) & 0xFFFF_FFFFL)))
        {
            respond(p.h16(2), p.h32(4), va, theirRkey, length);
        }
    }

    /**
     * S9.3-4: whether {@code p} belongs to the refused attempt of the refused WRITE (the first WRITE's first attempt
     * is refused, when {@link #refuseFirstWrite} asked); judges the first packet of its retry.
     */
    private boolean refusedAttempt(final Packet p, final int opcode, final int offset, final int length)
    {
        final long key = (long)p.h16(2) << 32 | (p.h32(4) & 0xFFFF_FFFFL);
        final int attempt = (p.h8(1) >>> SprayWire.SETH_ATTEMPT_SHIFT) & SprayWire.SETH_ATTEMPT_MASK;
        if (rnrTimerMicros > 0 && refusedKey < 0 && opcode == SprayWire.WRITE && attempt == 0)
        {
            refusedKey = key;
            refusedRsn = p.h32(16);
            refusedLength = length;
            refusals++;
        }
        if (key != refusedKey)
        {
            return false;
        }
        if (attempt == 0)
        {
            if (retried)
            {
                violation("a packet of the refused attempt 0 (offset " + offset + ") came after its retry had " +
                    "begun (S9.3-4)");
            }
            return !retried;
        }
        if (!retried)
        {
            retried = true;
            final long waited = System.nanoTime() - nackSentAt;
            final int packets = Math.max(1, (refusedLength + mtu - 1) / mtu);
            if (attempt != 1)
            {
                violation("the retry carries attempt " + attempt + ", not 1 (S9.3-4)");
            }
            if (waited < rnrTimerMicros * 1_000L)
            {
                violation("the retry's first packet came " + waited / 1_000 + " us after the NACK, before its " +
                    "rnrTimerMicros " + rnrTimerMicros + " (S9.3-4)");
            }
            if (refusedOffsets.size() < packets)
            {
                violation("the retry began when " + refusedOffsets.size() + " of the refused attempt's " + packets +
                    " packets had been acknowledged (S9.3-4)");
            }
            if (p.h32(16) != refusedRsn || length != refusedLength)
            {
                violation("the retry changed the RSN or length: " + p.h32(16) + ", " + length + " against " +
                    refusedRsn + ", " + refusedLength + " (S9.3-4)");
            }
        }
        return false;
    }

    /**
     * S10.2-4: a packet of the WRITE {@code key} of {@code length} bytes brought {@code bytes} new ones: the WRITE
     * opens with its first packet (any attempt) and closes once every byte came (and was acknowledged).
     */
    private void countOpen(final long key, final int bytes, final int length)
    {
        final Long before = openWrites.get(key);
        if (null == before && completedWrites.contains(key))
        {
            return; // a copy of a WRITE already whole
        }
        if (null == before)
        {
            writesStarted++;
        }
        final long received = (null == before ? 0 : before) + bytes;
        openWrites.put(key, received);
        final int open = openWrites.size(); // the WRITE whose last byte this is counts: its ACK is not sent yet
        if (received >= length)
        {
            openWrites.remove(key);
            completedWrites.add(key);
        }
        mostOpenWrites = Math.max(mostOpenWrites, open);
        if (advertisedWindow > 0 && open > advertisedWindow && open > reportedOpen)
        {
            reportedOpen = open;
            violation(open + " WRITEs open at once (a packet received, not every byte), above the window of " +
                advertisedWindow + " advertised (S10.2-4)");
        }
    }

    /** S9.3, S10.2-1: the refused WRITE's NACK, RNR NO_RESOURCES, sent whatever the loss rate (a QUERY repeats it). */
    private void sendRnrNack(final int stream, final int msn) throws IOException
    {
        link.send(FrameBuilder.bth(SprayWire.NACK, peerCid, 0, false).u8(SprayWire.SYNDROME_RNR)
            .u8(SprayWire.RNR_REASON_NO_RESOURCES).u16(stream).u32(msn).u32(rnrTimerMicros).u32(refusals)
            .controlTag(sendKey).bytes(), false, UdpLink.NOT_ECT);
        if (nackSentAt == 0)
        {
            nackSentAt = System.nanoTime();
        }
    }

    /**
     * S9.3.1-2: a QUERY of the refused attempt draws its NACK again; of a message wholly received (a WRITE every byte
     * of which came, a READ answered), ACCEPTED; of one still arriving or never seen, nothing.
     */
    private void onQuery(final Packet p) throws IOException
    {
        if (!p.controlTagValid(receiveKey))
        {
            return;
        }
        final long key = (long)p.h16(2) << 32 | (p.h32(4) & 0xFFFF_FFFFL);
        if (key == refusedKey && !retried)
        {
            sendRnrNack(p.h16(2), p.h32(4));
            return;
        }
        if (completedWrites.contains(key) || answered.contains(key))
        {
            send(FrameBuilder.bth(SprayWire.NACK, peerCid, 0, false).u8(SprayWire.SYNDROME_ACCEPTED).u8(0)
                .u16(p.h16(2)).u32(p.h32(4)).u32(0).u32(0).controlTag(sendKey).bytes());
        }
    }

    /** @return (stream, MSN, offset) of a data packet, as one key. */
    private static long content(final Packet p)
    {
        return (long)p.h16(2) << 48 ^ (long)p.h32(4) << 24 ^ (p.h32(8) & 0xFF_FFFFL) ^ (long)p.opcode() << 56;
    }

    /**
     * Keeps {@code what} unless {@link #MAX_VIOLATIONS_OF_A_KIND} of its kind (its text up to the packet it names,
     * numbers aside) are kept already: a target that repeats one violation (a flood of bad tags) costs no memory, and
     * every kind a check looks for is still there.
     */
    private void violation(final String what)
    {
        final int cut = what.indexOf(": ");
        final String kind = (cut < 0 ? what : what.substring(0, cut)).replaceAll("[0-9]+", "#");
        if (violationsOfKind.merge(kind, 1, Integer::sum) <= MAX_VIOLATIONS_OF_A_KIND)
        {
            violations.add(what);
        }
        else
        {
            violationsNotKept++;
        }
    }

    void respond(final int stream, final int msn, final long va, final int theirRkey, final int length)
    {
        final long from = va - regionBase;
        // a length of 2^31 or more reads as negative: outside the region too (before, copyOfRange threw out of serve)
        if (theirRkey != rkey || length < 0 || from < 0 || from + length > region.length)
        {
            violation("a READ outside the published region (stream " + stream + ", msn " + msn + ")");
            return;
        }
        if (pending.size() + length / mtu + 1 > MAX_PENDING_RESPONSES)
        {
            violation("READs asking for more than the responder queues (" + MAX_PENDING_RESPONSES + " packets)");
            return;
        }
        final long tag = SprayWire.messageTag(sendKey, SprayWire.READ_RESPONSE, 0, stream, msn, length, 0, 0, 0, peerCid,
            0);
        for (int offset = 0; offset < length || offset == 0; offset += mtu)
        {
            final int n = Math.min(mtu, length - offset);
            final Outbound o = new Outbound();
            o.body = FrameBuilder.bth(SprayWire.READ_RESPONSE, peerCid, 0, false).u8(0)
                .u8(offset + n >= length ? SprayWire.SETH_LAST : 0).u16(stream).u32(msn).u32(offset).u32(length)
                .u32(0).u64(tag).bytes(Arrays.copyOfRange(region, (int)from + offset, (int)from + offset + n)).bytes();
            pending.add(o);
            bytesRead += n;
            if (n <= 0)
            {
                break;
            }
        }
        pump();
    }

    /** Sends queued READ_RESPONSE packets on the paths with room, round robin. */
    private void pump()
    {
        for (int tries = 0; !pending.isEmpty() && tries < paths; )
        {
            final int path = nextPath;
            nextPath = (nextPath + 1) % paths;
            if (outstanding.get(path).size() >= WINDOW)
            {
                tries++;
                continue;
            }
            tries = 0;
            final Outbound o = pending.poll();
            o.path = path;
            o.psn = nextPsn[path];
            nextPsn[path] = (o.psn + 1) & SprayWire.PSN_MASK;
            o.body[0 + 12] = (byte)path; // SETH path
            o.body[9] = (byte)(o.psn >>> 16);
            o.body[10] = (byte)(o.psn >>> 8);
            o.body[11] = (byte)o.psn;
            if (outstanding.get(path).isEmpty())
            {
                lastProgress = System.nanoTime();
            }
            final int at = SprayWire.psnDistance(initialPsn, o.psn);
            outstanding.get(path).put(at, o);
            highestSent[path] = at;
            transmit(o, false);
            responsesSent++;
        }
    }

    private void transmit(final Outbound o, final boolean again)
    {
        if (again)
        {
            o.body[12 + 1] |= SprayWire.SETH_RETRANSMIT;
            responsesRetransmitted++;
        }
        o.sentAt = System.nanoTime();
        o.mark = highestSent[o.path];
        if (random.nextDouble() < lossOut)
        {
            responsesDropped++;
            return;
        }
        try
        {
            link.send(o.body, false, UdpLink.ECT_0);
        }
        catch (final IOException e)
        {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private void onProbe(final Packet p) throws IOException
    {
        final int path = p.h8(0);
        if (path >= paths || !p.controlTagValid(receiveKey))
        {
            violation("a PROBE whose tag does not verify or whose path is out of range: " + p);
            return;
        }
        if ((p.h8(1) & SprayWire.PRBH_RESYNC) != 0)
        {
            inbound.resync(path, p.psn());
        }
        else
        {
            inbound.record(path, p.psn());
        }
        sendAck(path);
    }

    /** S6.5: the peer's ACK of this end's path: forget what it acknowledges, resend what it shows missing. */
    private void onAck(final Packet p)
    {
        final int path = p.h8(0);
        if (path >= paths || !p.controlTagValid(receiveKey))
        {
            violation("an ACK whose tag does not verify or whose path is out of range: " + p);
            return;
        }
        final int sequence = p.h32(44);
        if (sequence - peerAckSequence[path] <= 0)
        {
            return; // stale (S5.1-2)
        }
        peerAckSequence[path] = sequence;
        final int cumulativePsn = p.h24(5);
        final TreeMap<Integer, Outbound> out = outstanding.get(path);
        int highest = SprayWire.psnDistance(initialPsn, cumulativePsn) - 1;
        for (int i = 1; i < SprayWire.SACK_BITS; i++)
        {
            if (ScriptedPeer.sackBit(p, i))
            {
                final int at = SprayWire.psnDistance(initialPsn, cumulativePsn + i);
                out.remove(at);
                highest = Math.max(highest, at);
            }
        }
        final int below = SprayWire.psnDistance(initialPsn, cumulativePsn);
        final int before = out.size();
        out.headMap(below).clear();
        if (out.size() < before)
        {
            lastProgress = System.nanoTime();
        }
        for (final Outbound o : out.headMap(highest).values())
        {
            if (highest > o.mark)
            {
                transmit(o, true);
            }
        }
        pump();
    }

    private void onClose(final Packet p) throws IOException
    {
        if (!p.controlTagValid(receiveKey))
        {
            violation("a CLOSE whose tag does not verify: " + p);
            return;
        }
        send(FrameBuilder.bth(SprayWire.CLOSE_ACK, peerCid, 0, false).u8(SprayWire.VERSION).u8(0).u8(paths).u8(1)
            .u16(mtu).u16(0).u8(0).u24(cid).u8(0).u24(0).u32(0).u64(p.h64(20)).u8(0).zeros(3).controlTag(sendKey)
            .bytes());
        closed = true;
    }

    /** A lost tail: nothing acknowledged for a while, so each path's oldest outstanding response goes again (S6.7). */
    private void tick()
    {
        if (!established() || System.nanoTime() - lastProgress < TAIL_NANOS)
        {
            return;
        }
        boolean any = false;
        final long now = System.nanoTime();
        for (final TreeMap<Integer, Outbound> out : outstanding)
        {
            final Outbound o = out.isEmpty() ? null : out.firstEntry().getValue();
            if (null != o && now - o.sentAt >= TAIL_NANOS)
            {
                transmit(o, true);
                any = true;
            }
        }
        if (any)
        {
            lastProgress = System.nanoTime();
        }
    }

    private void sendAck(final int path) throws IOException
    {
        send(inbound.ack(peerCid, path, 0, 0, refusals, sendKey));
    }

    /** Sends a control packet Not-ECT (S2.3-2), or drops it as the loss rate says. */
    private void send(final byte[] body) throws IOException
    {
        if (established() && random.nextDouble() < lossOut)
        {
            return;
        }
        link.send(body, false, UdpLink.NOT_ECT);
    }
}
