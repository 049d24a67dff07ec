package io.spraynic.conformance;

import java.io.IOException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntPredicate;
import java.util.function.Predicate;

/**
 * The suite's side of one spray connection, as initiator: the handshake of S9.1 and S12.2, packets built from the
 * document's tables, and the receive side a peer must keep for what the target sends it (per-path windows and
 * ACKs of S6.3-S6.4, READ responses placed by offset). Written from docs/PROTOCOL.md only; it shares no code with
 * the implementation it judges. Control path, single-threaded: allocates freely.
 */
final class ScriptedPeer
{
    static final long MILLI = 1_000_000L;
    /** Packets a wait reads past its deadline at most: those queued while the suite was not running. */
    private static final int LATE_READS = 512;

    private final UdpLink link;
    final ConnectRequest request;
    Packet connectAck;
    int remoteCid;
    int paths;
    int mtu;
    int streams;
    /** S10.2-3: the target's inbound message window and READ limit from its CONNECT_ACK (0 there: the defaults). */
    int peerWindow;
    int peerReads;
    /** Whether the target advertised its window (a nonzero CONH {@code window}). */
    boolean windowAdvertised;
    long[] sendKey;
    long[] receiveKey;
    private int[] nextPsn;
    /** The target's direction: what the suite received on each path. */
    private ReceiveWindows inbound;
    private final int[] nextMsn = new int[65_536];
    private final Map<Long, InboundRead> reads = new HashMap<>();
    /** Inbound data PSNs the suite pretends were lost, once each: path << 24 | psn. */
    private final java.util.Set<Long> dropOnce = new java.util.HashSet<>();
    /** Every packet the target sent, in order of arrival. */
    final List<Packet> received = new ArrayList<>();
    /** Target data packets and probes whose tag (S12.3, S12.4) failed. */
    final List<String> tagFailures = new ArrayList<>();
    /** When true, the target's data and probes are not acknowledged (the suite plays a silent peer). */
    boolean silent;
    /** With {@link #silent}: PROBEs are still acknowledged (the target's start probe of S8.3.1 is answered). */
    boolean answerProbes;
    /**
     * The target's PROBEs (not RESYNCs) are set aside, not taken in, until {@link #takeInDeferredProbes}: an ACK sent
     * meanwhile does not cover them, so it gives the target no RTT sample from them (a held packet's tail probes,
     * acknowledged with it, are samples as long as the hold).
     */
    boolean deferProbes;
    private final List<Packet> deferredProbes = new ArrayList<>();
    /**
     * When above 0 and an ACK of path 0 was sent, the suite sends that ACK again, stale (S5.1-2), whenever it sent
     * nothing for this long, so that a target does not close the connection for idleness (S12.10) while a check
     * withholds its ACKs, or waits with nothing to acknowledge, for longer than the target's {@code idleTimeout}.
     */
    long keepaliveNanos;
    private long lastSentNanos = System.nanoTime();
    /** The share (S8.3, Mb/s) the suite's ACKs give the target; 0: no hint. */
    int rateHintMbps;
    /** The target's paths whose packets the suite drops and never acknowledges (a dead route, S7.4). */
    final BitSet deadPaths = new BitSet();
    /** The target's path whose first transmissions the suite drops, one in {@link #lossyEvery} (a lossy route, S7.3); -1: none. */
    int lossyPath = -1;
    int lossyEvery;
    /** Of {@link #lossyPath}: the first transmissions of data seen, and those dropped. */
    int lossySeen;
    int lossyDropped;
    /**
     * The target's path whose ACKs the suite sends {@link #slowNanos} late (a slow route, S7.3); -1: none. Each ACK is
     * built when its packet arrives, so that it covers only what had arrived then, and goes when it is due.
     */
    int slowPath = -1;
    long slowNanos;
    /**
     * How late the slow path's next ACK goes: raised by {@link #SLOW_RAMP_NANOS} an ACK up to {@link #slowNanos}, so
     * that an RFC 6298 RTO, whose 4 x rttvar follows a ramp of d per sample about 32 d ahead while srtt lags about
     * 7 d, stays above the RTT at any rtoMin and no packet of the slow path times out (S6.8).
     */
    private long slowAppliedNanos;
    static final long SLOW_RAMP_NANOS = 50_000;
    /** Of {@link #slowPath}: the first transmissions of data seen. */
    int slowSeen;
    /** The slow path's ACKs not yet sent, oldest first, and when each is due (System.nanoTime()). */
    private final java.util.ArrayDeque<byte[]> lateAcks = new java.util.ArrayDeque<>();
    private final java.util.ArrayDeque<Long> lateAckDue = new java.util.ArrayDeque<>();
    /** S6.5-2: the queue the suite may put on one of the target's paths ({@link QueuedRoute}). */
    final QueuedRoute queue = new QueuedRoute();

    /** A READ this peer asked for: its buffer and the bytes of it received. */
    static final class InboundRead
    {
        final int stream;
        final int msn;
        final byte[] data;
        final BitSet placed = new BitSet();
        int bytesPlaced;
        final List<Packet> packets = new ArrayList<>();

        InboundRead(final int stream, final int msn, final int length)
        {
            this.stream = stream;
            this.msn = msn;
            this.data = new byte[length];
        }

        boolean complete()
        {
            return bytesPlaced >= data.length;
        }
    }

    ScriptedPeer(final UdpLink link, final ConnectRequest request)
    {
        this.link = link;
        this.request = request;
    }

    UdpLink link()
    {
        return link;
    }

    // ---------------------------------------------------------------------------------------------------------
    // Handshake (S9.1)
    // ---------------------------------------------------------------------------------------------------------

    /**
     * Sends {@code r} as a CONNECT and waits for the first CONNECT_RETRY, CONNECT_REJECT or CONNECT_ACK addressed
     * to its CID.
     *
     * @return that answer, or null when none came within {@code timeoutNanos}.
     */
    Packet connectOnce(final ConnectRequest r, final long timeoutNanos) throws IOException
    {
        return connectOnce(r, timeoutNanos, false);
    }

    Packet connectOnce(final ConnectRequest r, final long timeoutNanos, final boolean corruptIcrc) throws IOException
    {
        link.send(r.frame(), corruptIcrc);
        return awaitPacket(timeoutNanos, p -> isHandshakeAnswer(p.opcode()) && p.destQp() == r.senderCid);
    }

    static boolean isHandshakeAnswer(final int opcode)
    {
        return opcode == SprayWire.CONNECT_RETRY || opcode == SprayWire.CONNECT_REJECT ||
            opcode == SprayWire.CONNECT_ACK;
    }

    /**
     * The whole handshake: CONNECT, the RETRY's cookie, CONNECT again, CONNECT_ACK, keys derived.
     *
     * @return null when established, else why not.
     */
    String establish(final long timeoutNanos) throws IOException
    {
        Packet answer = null;
        for (int attempt = 0; attempt < 4 && null == answer; attempt++)
        {
            answer = connectOnce(request, timeoutNanos / 4);
        }
        if (null == answer)
        {
            return "no answer to CONNECT";
        }
        if (answer.opcode() == SprayWire.CONNECT_RETRY)
        {
            request.cookie = answer.wholeHeaders() && answer.length() >= SprayWire.BTH_LENGTH + SprayWire.CONH_LENGTH + 16 ?
                answer.hBytes(SprayWire.CONH_LENGTH, 16) : new byte[16];
            answer = null;
            for (int attempt = 0; attempt < 4 && null == answer; attempt++)
            {
                answer = connectOnce(request, timeoutNanos / 4);
            }
            if (null == answer)
            {
                return "no answer to the CONNECT with the RETRY's cookie";
            }
        }
        if (answer.opcode() == SprayWire.CONNECT_REJECT)
        {
            return answer.wholeHeaders() ? "CONNECT_REJECT reason " + answer.h8(28) :
                "a CONNECT_REJECT cut short (" + answer.length() + " B)";
        }
        if (answer.opcode() != SprayWire.CONNECT_ACK)
        {
            return "answered with " + SprayWire.opcodeName(answer.opcode());
        }
        return accept(answer);
    }

    /** Takes a CONNECT_ACK: the connection's limits, the target's CID and initial PSN, and the keys. */
    String accept(final Packet ack)
    {
        if (!ack.icrcValid || ack.length() < SprayWire.BTH_LENGTH + SprayWire.CONH_LENGTH + SprayWire.HSB_LENGTH +
            SprayWire.ICRC_LENGTH)
        {
            return "CONNECT_ACK malformed: " + ack;
        }
        if (null != request.psk)
        {
            final int end = ack.length() - SprayWire.ICRC_LENGTH - ack.padCount();
            if (!java.util.Arrays.equals(ConnectRequest.proof(request.psk, ack.bytes, end),
                java.util.Arrays.copyOfRange(ack.bytes, ConnectRequest.PROOF_AT, ConnectRequest.PROOF_AT +
                ConnectRequest.PROOF_LENGTH)))
            {
                return "the CONNECT_ACK's proof does not verify with the pre-shared key (S12.2)";
            }
        }
        connectAck = ack;
        remoteCid = ack.h24(9);
        paths = Math.min(request.paths, ack.h8(2));
        mtu = Math.min(request.mtu, ack.h16(4));
        final int theirStreams = ack.h16(6) == 0 ? 65_536 : ack.h16(6);
        streams = Math.min(request.streams == 0 ? 65_536 : request.streams, theirStreams);
        windowAdvertised = ack.h16(SprayWire.CONH_WINDOW) != 0;
        peerWindow = windowAdvertised ? ack.h16(SprayWire.CONH_WINDOW) : SprayWire.DEFAULT_WINDOW;
        peerReads = ack.h8(SprayWire.CONH_READS) != 0 ? ack.h8(SprayWire.CONH_READS) : SprayWire.DEFAULT_READS;
        final byte[] theirPublic = ack.hBytes(SprayWire.CONH_LENGTH + 16, HandshakeKeys.PUBLIC_KEY_LENGTH);
        final byte[] shared = request.keys.shared(theirPublic);
        if (null == shared)
        {
            return "CONNECT_ACK public key unusable (BAD_KEY)";
        }
        final long[][] keys = HandshakeKeys.derive(shared, request.keys.publicKey, theirPublic, request.senderCid,
            remoteCid, request.token, request.psk);
        sendKey = keys[0];
        receiveKey = keys[1];
        if (paths < 1)
        {
            return "CONNECT_ACK offers " + ack.h8(2) + " paths";
        }
        nextPsn = new int[paths];
        inbound = new ReceiveWindows(paths, ack.h24(13));
        for (int i = 0; i < paths; i++)
        {
            nextPsn[i] = (request.initialPsn + i * SprayWire.PATH_PSN_STRIDE) & SprayWire.PSN_MASK;
        }
        return null;
    }

    int localCid()
    {
        return request.senderCid;
    }

    // ---------------------------------------------------------------------------------------------------------
    // Sending
    // ---------------------------------------------------------------------------------------------------------

    /** @return the next PSN of path {@code path} in the suite's direction, and takes it. */
    int takePsn(final int path)
    {
        final int psn = nextPsn[path];
        nextPsn[path] = (psn + 1) & SprayWire.PSN_MASK;
        return psn;
    }

    /** Moves the next PSN of {@code path} to {@code psn} (after a RESYNC the target accepted). */
    void resumeAt(final int path, final int psn)
    {
        nextPsn[path] = psn & SprayWire.PSN_MASK;
    }

    int peekPsn(final int path)
    {
        return nextPsn[path];
    }

    /** @return the next MSN of a stream, and takes it. */
    int takeMsn(final int stream)
    {
        return nextMsn[stream]++;
    }

    /** @return the next MSN of a stream, not taken: one this peer never sent. */
    int peekMsn(final int stream)
    {
        return nextMsn[stream];
    }

    /** A message's invariants, from which its tag (S12.4) comes. */
    record Message(int opcode, int stream, int msn, int length, int rsn, long base, int rkey, int immediate)
    {
    }

    /** @return the S12.4 tag of the first attempt of a message this peer sends. */
    long tag(final Message m)
    {
        return tag(m, 0);
    }

    /** @return the S12.4 tag of attempt {@code attempt} (an RNR retry's, S9.3-4) of a message this peer sends. */
    long tag(final Message m, final int attempt)
    {
        return SprayWire.messageTag(sendKey, m.opcode, attempt, m.stream, m.msn, m.length, m.rsn, m.base, m.rkey,
            remoteCid, m.immediate);
    }

    /**
     * @return one data packet of {@code m} (BTH, SETH, RETH for WRITE and READ_REQUEST), before its ICRC.
     */
    byte[] dataPacket(final Message m, final int path, final int psn, final int offset, final byte[] payload,
        final int sethFlags, final boolean ackReq, final long tag)
    {
        final FrameBuilder b = FrameBuilder.bth(m.opcode, remoteCid, psn, ackReq);
        b.u8(path).u8(sethFlags).u16(m.stream).u32(m.msn).u32(offset).u32(m.length).u32(m.rsn).u64(tag);
        if (m.opcode == SprayWire.WRITE || m.opcode == SprayWire.WRITE_IMM || m.opcode == SprayWire.READ_REQUEST)
        {
            b.u64(m.base + Integer.toUnsignedLong(offset)).u32(m.rkey).u32(m.length);
        }
        if (m.opcode == SprayWire.WRITE_IMM || m.opcode == SprayWire.SEND_IMM)
        {
            b.u32(m.immediate);
        }
        return b.bytes(payload).bytes();
    }

    /** @return the packets of a WRITE of {@code data} at {@code base}, each on its path, MTU-sized, in offset order. */
    List<byte[]> writePackets(final Message m, final byte[] data, final IntPredicate pathOfPacket, final int[] psnsOut)
    {
        return writePackets(m, data, pathOfPacket, psnsOut, 0);
    }

    /** As above, for attempt {@code attempt} of the message (SETH attempt and tag, S9.3-4, S12.4). */
    List<byte[]> writePackets(final Message m, final byte[] data, final IntPredicate pathOfPacket, final int[] psnsOut,
        final int attempt)
    {
        final List<byte[]> out = new ArrayList<>();
        final long tag = tag(m, attempt);
        final int attemptFlags = (attempt & SprayWire.SETH_ATTEMPT_MASK) << SprayWire.SETH_ATTEMPT_SHIFT;
        final int count = Math.max(1, (data.length + mtu - 1) / mtu);
        for (int i = 0; i < count; i++)
        {
            final int offset = i * mtu;
            final int path = pathOf(pathOfPacket, i);
            final int psn = takePsn(path);
            if (null != psnsOut)
            {
                psnsOut[i] = psn;
            }
            final byte[] payload = java.util.Arrays.copyOfRange(data, offset, Math.min(data.length, offset + mtu));
            out.add(dataPacket(m, path, psn, offset, payload, (i == count - 1 ? SprayWire.SETH_LAST : 0) | attemptFlags,
                i == count - 1, tag));
        }
        return out;
    }

    private int pathOf(final IntPredicate onPathOne, final int packet)
    {
        return null != onPathOne && onPathOne.test(packet) && paths > 1 ? 1 : 0;
    }

    /** A READ_REQUEST of {@code length} bytes at {@code address}; the response is gathered by {@link #read}. */
    byte[] readRequest(final int path, final int stream, final int msn, final long address, final int rkey, final int length)
    {
        final Message m = new Message(SprayWire.READ_REQUEST, stream, msn, length, 0, address, rkey, 0);
        reads.put(key(stream, msn), new InboundRead(stream, msn, length));
        return dataPacket(m, path, takePsn(path), 0, new byte[0], SprayWire.SETH_LAST, true, tag(m));
    }

    /**
     * RDMA-READs {@code length} bytes of the target's memory on path 0 and waits for them.
     *
     * @return the read, complete or not (see {@link InboundRead#complete}).
     */
    InboundRead read(final int stream, final long address, final int rkey, final int length, final long timeoutNanos)
        throws IOException
    {
        final int msn = takeMsn(stream);
        send(readRequest(0, stream, msn, address, rkey, length));
        final InboundRead read = reads.get(key(stream, msn));
        awaitPacket(timeoutNanos, p -> read.complete());
        return read;
    }

    /** @return the READ of (stream, msn) this peer asked for with {@link #readRequest}, or null. */
    InboundRead inboundRead(final int stream, final int msn)
    {
        return reads.get(key(stream, msn));
    }

    /** A PROBE (S5.2) of {@code path} at {@code psn}, tagged with {@code key}. */
    byte[] probe(final int path, final int psn, final int flags, final long[] key)
    {
        return FrameBuilder.bth(SprayWire.PROBE, remoteCid, psn, false).u8(path).u8(flags).u16(0).u8(0).u24(psn)
            .controlTag(key).bytes();
    }

    /** A CLOSE (S9.2): this end's CID, a token, initial PSN 0; tagged with {@code key}. */
    byte[] close(final long token, final long[] key)
    {
        return conh(SprayWire.CLOSE, token).controlTag(key).bytes();
    }

    /** A QUERY (S9.3.1) of message (stream, msn). */
    byte[] query(final int stream, final int msn)
    {
        return FrameBuilder.bth(SprayWire.QUERY, remoteCid, 0, false).u8(SprayWire.SYNDROME_ACCEPTED).u8(0).u16(stream)
            .u32(msn).u32(0).u32(0).controlTag(sendKey).bytes();
    }

    private FrameBuilder conh(final int opcode, final long token)
    {
        return FrameBuilder.bth(opcode, remoteCid, 0, false).u8(SprayWire.VERSION).u8(0).u8(paths).u8(request.planes)
            .u16(mtu).u16(streams & 0xFFFF).u8(0).u24(request.senderCid).u8(0).u24(0).u32(request.ingressMbps)
            .u64(token).u8(0).zeros(3);
    }

    void send(final byte[] body) throws IOException
    {
        link.send(body, false);
        lastSentNanos = System.nanoTime();
    }

    /** Sends {@code body} with IP ECN field {@code ecn} (S2.3: CE to play a marking router). */
    void send(final byte[] body, final int ecn) throws IOException
    {
        link.send(body, false, ecn);
        lastSentNanos = System.nanoTime();
    }

    // the suite's keepalive (keepaliveNanos): the last ACK of path 0 again, stale; when the next one is due
    private long sendKeepaliveIfDue(final long now) throws IOException
    {
        if (keepaliveNanos <= 0 || null == inbound || inbound.lastAckSequence(0) == 0)
        {
            return Long.MAX_VALUE;
        }
        if (now - lastSentNanos >= keepaliveNanos)
        {
            send(inbound.keepalive(remoteCid, 0, sendKey));
        }
        return lastSentNanos + keepaliveNanos;
    }

    /** Drops the next arrival of the target's data PSN {@code psn} on {@code path} (a loss the suite simulates). */
    void dropOnce(final int path, final int psn)
    {
        dropOnce.add((long)path << 24 | psn);
    }

    /** Whether the suite's ACKs report the duplicates it received (S5.1-3); off (0) unless a check asks. */
    void reportDuplicates(final boolean on)
    {
        inbound.reportDuplicates = on;
    }

    int inboundCumulative(final int path)
    {
        return inbound.cumulative(path);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Receiving
    // ---------------------------------------------------------------------------------------------------------

    /**
     * Receives for up to {@code timeoutNanos}, answering the target's data and probes as a peer must, until a
     * packet satisfies {@code until} (also tested once with null after each packet, for conditions on state).
     *
     * @return the packet that satisfied it, or null on time-out (or when the condition held on state alone).
     */
    Packet awaitPacket(final long timeoutNanos, final Predicate<Packet> until) throws IOException
    {
        final long deadline = System.nanoTime() + timeoutNanos;
        int late = 0;
        while (true)
        {
            final long now = System.nanoTime();
            sendDueAcks(now);
            final long keepaliveDue = sendKeepaliveIfDue(now);
            final long left = deadline - now;
            // past the deadline, what is already queued is still read (receive(0) looks once), up to a socket
            // buffer's worth: a suite descheduled or paused for longer than the wait (a loaded host) must not miss
            // an answer that came in time, nor a packet a silence check must see
            if (left <= 0 && ++late > LATE_READS)
            {
                return null;
            }
            final long untilKeepalive =
                keepaliveDue == Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(0, keepaliveDue - now);
            long wait = left <= 0 ? 0 : Math.min(untilKeepalive,
                lateAckDue.isEmpty() ? left : Math.min(left, Math.max(0, lateAckDue.peekFirst() - now)));
            wait = Math.min(wait, Math.max(0, queue.nextDueNanos() - now));
            final Packet p = link.receive(wait);
            if (null == p)
            {
                if (wait < left)
                {
                    continue; // a late ACK or a keepalive is due, not the deadline
                }
                return null;
            }
            received.add(p);
            handle(p); // takes only packets of a valid ICRC, which are at least a BTH and an ICRC long
            boolean answer;
            try
            {
                answer = until.test(p);
            }
            catch (final IndexOutOfBoundsException truncated)
            {
                // shorter than the fields the condition reads of it: not the answer awaited, whatever the target
                // meant by it (a check that needs a whole packet says so when none comes); never an exception out of
                // the suite. Only the condition is guarded: a bug of the suite's own handling still fails its check.
                link.countTruncated();
                answer = false;
            }
            if (answer)
            {
                return p;
            }
        }
    }

    /** @return every packet received in the next {@code nanos} (the target's data and probes answered meanwhile). */
    List<Packet> collect(final long nanos) throws IOException
    {
        final int from = received.size();
        awaitPacket(nanos, p -> false);
        return new ArrayList<>(received.subList(from, received.size()));
    }

    private void handle(final Packet p)
    {
        if (null == sendKey || !p.icrcValid || !p.wholeHeaders() || p.destQp() != request.senderCid)
        {
            return;
        }
        final int opcode = p.opcode();
        if (SprayWire.isData(opcode) || opcode == SprayWire.PROBE)
        {
            final int path = p.h8(0);
            if (path >= paths || deadPaths.get(path))
            {
                return;
            }
            if (opcode == SprayWire.PROBE && !p.controlTagValid(receiveKey))
            {
                tagFailures.add("PROBE with a tag that does not verify: " + p);
                return;
            }
            if (deferProbes && opcode == SprayWire.PROBE && (p.h8(1) & SprayWire.PRBH_RESYNC) == 0)
            {
                deferredProbes.add(p);
                return;
            }
            if (dropOnce.remove((long)path << 24 | p.psn()))
            {
                return;
            }
            if (path == lossyPath && SprayWire.isData(opcode) && (p.h8(1) & SprayWire.SETH_RETRANSMIT) == 0 &&
                ++lossySeen % lossyEvery == 0)
            {
                lossyDropped++;
                return;
            }
            if (opcode == SprayWire.READ_RESPONSE)
            {
                placeReadResponse(p);
            }
            if (path == queue.path && queue.offer(p, p.arrivalNanos)) // the kernel's receive time, as the timer checks
            {
                return;
            }
            takeIn(p, path, opcode);
        }
    }

    /** Records the probes {@link #deferProbes} set aside as received (the next ACK of their path covers them). */
    void takeInDeferredProbes()
    {
        for (final Packet p : deferredProbes)
        {
            inbound.record(p.h8(0), p.psn());
        }
        deferredProbes.clear();
    }

    /** Takes in the queued path's packets due by {@code now}, or all of them once no path is queued. */
    private void takeInDue(final long now)
    {
        for (Packet p = queue.pollDue(now); null != p; p = queue.pollDue(now))
        {
            takeIn(p, p.h8(0), p.opcode());
        }
    }

    /** Ends the queue on {@link #queue}'s path: its packets still queued are taken in now. */
    void endQueuedPath()
    {
        queue.end();
        takeInDue(System.nanoTime());
    }

    // the target's data or probe, checked, placed and let through: recorded and acknowledged as a peer does
    private void takeIn(final Packet p, final int path, final int opcode)
    {
        if (opcode == SprayWire.PROBE && (p.h8(1) & SprayWire.PRBH_RESYNC) != 0)
        {
            inbound.resync(path, p.psn());
        }
        else
        {
            inbound.record(path, p.psn());
        }
        if (path == slowPath)
        {
            if (SprayWire.isData(opcode) && (p.h8(1) & SprayWire.SETH_RETRANSMIT) == 0)
            {
                slowSeen++;
            }
            lateAcks.addLast(inbound.ack(remoteCid, path, 0, rateHintMbps, sendKey));
            slowAppliedNanos = Math.min(slowNanos, slowAppliedNanos + SLOW_RAMP_NANOS);
            lateAckDue.addLast(System.nanoTime() + slowAppliedNanos);
        }
        else if (!silent || answerProbes && opcode == SprayWire.PROBE)
        {
            sendAck(path);
        }
    }

    private void placeReadResponse(final Packet p)
    {
        final int stream = p.h16(2);
        final int msn = p.h32(4);
        final InboundRead read = reads.get(key(stream, msn));
        if (null == read)
        {
            return;
        }
        final long expected = SprayWire.messageTag(receiveKey, SprayWire.READ_RESPONSE, SprayWire.attempt(p), stream,
            msn, p.h32(12), 0, 0, 0, request.senderCid, 0);
        if (p.h64(20) != expected)
        {
            tagFailures.add("READ_RESPONSE with a message tag that does not verify: " + p);
            return;
        }
        read.packets.add(p);
        final int offset = p.h32(8);
        final byte[] payload = p.payload();
        if (offset < 0 || (long)offset + payload.length > read.data.length) // an int sum wrapped below 0 and passed
        {
            return;
        }
        System.arraycopy(payload, 0, read.data, offset, payload.length);
        // bytes, not packets: responses that overlap (another MTU, a retransmission cut otherwise) count once, so a
        // READ is complete only when every byte came
        read.placed.set(offset, offset + payload.length);
        read.bytesPlaced = read.placed.cardinality();
    }

    /** Sends the slow path's ACKs due by {@code now}, or all of them when no path is slow any more. */
    private void sendDueAcks(final long now) throws IOException
    {
        takeInDue(now);
        while (!lateAckDue.isEmpty() && (slowPath < 0 || lateAckDue.peekFirst() - now <= 0))
        {
            lateAckDue.removeFirst();
            send(lateAcks.removeFirst());
        }
    }

    /** Ends {@link #slowPath}: its ACKs still held go now. */
    void endSlowPath() throws IOException
    {
        slowPath = -1;
        slowAppliedNanos = 0;
        sendDueAcks(System.nanoTime());
    }

    /** Sends an ACK (S5.1) of the target's path {@code path}, echoing no CE mark. */
    void sendAck(final int path) throws RuntimeException
    {
        sendAck(path, 0);
    }

    /** Sends an ACK of {@code path} that echoes {@code ceCount} CE marks (ECE set when above 0, S8.1). */
    void sendAck(final int path, final int ceCount) throws RuntimeException
    {
        final byte[] ack = inbound.ack(remoteCid, path, ceCount, rateHintMbps, sendKey);
        try
        {
            send(ack);
        }
        catch (final IOException e)
        {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** @return the last ackSequence the suite sent on the target's path {@code path} (0: none yet). */
    int lastAckSequence(final int path)
    {
        return inbound.lastAckSequence(path);
    }

    /**
     * Sends a stale ACK of {@code path} (S5.1-2): the last ackSequence again, claiming every PSN before
     * {@code claimedCumulative} received.
     *
     * @return its ackSequence.
     */
    int sendStaleAck(final int path, final int claimedCumulative) throws IOException
    {
        send(inbound.staleAck(remoteCid, path, claimedCumulative, sendKey));
        return inbound.lastAckSequence(path);
    }

    /** @return whether {@code p} is an ACK (of this connection, tag verified) of path {@code path}. */
    boolean isAckOf(final Packet p, final int path)
    {
        return p.icrcValid && p.opcode() == SprayWire.ACK && p.wholeHeaders() && p.destQp() == request.senderCid &&
            p.h8(0) == path && p.controlTagValid(receiveKey);
    }

    /** @return the last ACK of {@code path} among {@code packets} (by arrival), or null. */
    Packet lastAck(final List<Packet> packets, final int path)
    {
        Packet last = null;
        for (final Packet p : packets)
        {
            if (isAckOf(p, path))
            {
                last = p;
            }
        }
        return last;
    }

    /** @return whether SACK bit {@code i} of ACK {@code p} is set (S5.1: bit 0 is 0x80 of byte 8). */
    static boolean sackBit(final Packet p, final int i)
    {
        return (p.h8(8 + (i >> 3)) & (0x80 >>> (i & 7))) != 0;
    }

    /** @return the SACK bits set in {@code p}, as a list of offsets from its cumulative PSN. */
    static List<Integer> sackBits(final Packet p)
    {
        final List<Integer> bits = new ArrayList<>();
        for (int i = 0; i < SprayWire.SACK_BITS; i++)
        {
            if (sackBit(p, i))
            {
                bits.add(i);
            }
        }
        return bits;
    }

    private static long key(final int stream, final int msn)
    {
        return (long)stream << 32 | (msn & 0xFFFF_FFFFL);
    }
}
