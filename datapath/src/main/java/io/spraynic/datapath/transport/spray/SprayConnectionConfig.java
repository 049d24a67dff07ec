package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.rocev2.PathMtu;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.wire.SipHash;

/**
 * The parameters of one connection, as both ends agreed them (S9.1: the minimum of each pair of limits):
 * both CIDs, paths, MTU, streams, both initial PSNs, the peer's addresses per plane, and this end's queue
 * sizes and completion queues. A mutable builder read once by {@link SprayEngine#open} (control path).
 */
public final class SprayConnectionConfig
{
    // the public key of keysFromCids(): "spraynic" "oob keys"
    private static final long OUT_OF_BAND_K0 = 0x7370_7261_796E_6963L;
    private static final long OUT_OF_BAND_K1 = 0x6F6F_6220_6B65_7973L;

    /** S10.2, S11: the inbound message window assumed of a peer that does not advertise one. */
    public static final int DEFAULT_WINDOW = 1024;
    /** S10.2, S11: the READ requests served at once by default, and assumed of a peer that does not advertise. */
    public static final int DEFAULT_READS = 64;
    /** The largest window and READ limit CONH can carry (u16, u8). */
    public static final int MAX_WINDOW = 0xFFFF;
    public static final int MAX_READS = 0xFF;

    int localCid;
    int remoteCid;
    int paths = 8;
    int mtu = 4096;
    int streams = 1;
    int sendInitialPsn;
    int receiveInitialPsn;
    int[] remoteIpv4 = new int[64];
    long[] remoteMac = new long[64];
    long[] remoteIpv6High = new long[64];
    long[] remoteIpv6Low = new long[64];
    boolean[] remoteIsIpv6 = new boolean[64];
    int sourcePortBase = 49152;
    int sendQueueDepth = 1024;
    int receiveQueueDepth = 1024;
    int maxInboundMessages = 1024;
    int placementChunks = 1024;
    /** S10.2: READ requests this end serves at once (its responses being sent), advertised in CONH {@code reads}. */
    int responderReads = DEFAULT_READS;
    /** S10.2: the peer's advertised inbound message window and READ limit, as clamped by {@link #peerLimits}. */
    int peerWindow = DEFAULT_WINDOW;
    int peerReads = DEFAULT_READS;
    // S12: the SipHash-2-4 keys of the two directions, set by the handshake (or agreed out of band for open())
    long sendKey0;
    long sendKey1;
    long receiveKey0;
    long receiveKey1;
    CompletionQueue sendCq;
    CompletionQueue receiveCq;

    /** @return a copy (the handshake fills one per accepted connection from a listener's template). */
    SprayConnectionConfig copy()
    {
        final SprayConnectionConfig c = new SprayConnectionConfig();
        c.localCid = localCid;
        c.remoteCid = remoteCid;
        c.paths = paths;
        c.mtu = mtu;
        c.streams = streams;
        c.sendInitialPsn = sendInitialPsn;
        c.receiveInitialPsn = receiveInitialPsn;
        c.remoteIpv4 = remoteIpv4.clone();
        c.remoteMac = remoteMac.clone();
        c.remoteIpv6High = remoteIpv6High.clone();
        c.remoteIpv6Low = remoteIpv6Low.clone();
        c.remoteIsIpv6 = remoteIsIpv6.clone();
        c.sourcePortBase = sourcePortBase;
        c.sendQueueDepth = sendQueueDepth;
        c.receiveQueueDepth = receiveQueueDepth;
        c.maxInboundMessages = maxInboundMessages;
        c.placementChunks = placementChunks;
        c.responderReads = responderReads;
        c.peerWindow = peerWindow;
        c.peerReads = peerReads;
        c.sendKey0 = sendKey0;
        c.sendKey1 = sendKey1;
        c.receiveKey0 = receiveKey0;
        c.receiveKey1 = receiveKey1;
        c.sendCq = sendCq;
        c.receiveCq = receiveCq;
        return c;
    }

    /**
     * Sets the connection's keys (S12.2): what this end sends is tagged with the send key, what it receives is
     * checked with the receive key, so the peer's config has the two swapped. The handshake sets them from its
     * key exchange; a connection opened with {@link SprayEngine#open} takes them from here, agreed out of band.
     *
     * @return this.
     */
    public SprayConnectionConfig keys(final long send0, final long send1, final long receive0, final long receive1)
    {
        this.sendKey0 = send0;
        this.sendKey1 = send1;
        this.receiveKey0 = receive0;
        this.receiveKey1 = receive1;
        return this;
    }

    /**
     * Sets keys derived from the two CIDs, for connections opened with {@link SprayEngine#open} at both ends
     * without a handshake (the simulator, benchmarks, tests): both ends compute matching swapped keys. They are
     * not secret; a connection that must be authenticated takes its keys from the handshake (S12.2).
     * Call after {@link #cids}.
     *
     * @return this.
     */
    public SprayConnectionConfig keysFromCids()
    {
        final long forward = (long)localCid << 32 | (remoteCid & 0xFFFF_FFFFL);
        final long backward = (long)remoteCid << 32 | (localCid & 0xFFFF_FFFFL);
        return keys(SipHash.hash4(OUT_OF_BAND_K0, OUT_OF_BAND_K1, forward, 0, 0, 0),
            SipHash.hash4(OUT_OF_BAND_K0, OUT_OF_BAND_K1, forward, 1, 0, 0),
            SipHash.hash4(OUT_OF_BAND_K0, OUT_OF_BAND_K1, backward, 0, 0, 0),
            SipHash.hash4(OUT_OF_BAND_K0, OUT_OF_BAND_K1, backward, 1, 0, 0));
    }

    /** @param local this end's CID. @param remote the peer's CID (what packets carry in DestQP, S1.2). @return this. */
    public SprayConnectionConfig cids(final int local, final int remote)
    {
        this.localCid = local;
        this.remoteCid = remote;
        return this;
    }

    /** @param paths P per direction, 1..64 (S1.3). @return this. */
    public SprayConnectionConfig paths(final int paths)
    {
        this.paths = paths;
        return this;
    }

    /** @param mtu 256, 512, 1024, 2048 or 4096 (S4.3). @return this. */
    public SprayConnectionConfig mtu(final int mtu)
    {
        this.mtu = mtu;
        return this;
    }

    /** @param streams S, 1..65536 (S1.4). @return this. */
    public SprayConnectionConfig streams(final int streams)
    {
        this.streams = streams;
        return this;
    }

    /**
     * @param send    first PSN of this end's path 0 (path i starts at {@code send + i * 2^18}, S5.4).
     * @param receive the peer's: first PSN of its path 0.
     * @return this.
     */
    public SprayConnectionConfig initialPsns(final int send, final int receive)
    {
        this.sendInitialPsn = send;
        this.receiveInitialPsn = receive;
        return this;
    }

    /** @param plane a plane. @param ipv4 the peer's address on it. @param mac its MAC. @return this. */
    public SprayConnectionConfig remote(final int plane, final int ipv4, final long mac)
    {
        remoteIpv4[plane] = ipv4;
        remoteMac[plane] = mac;
        remoteIsIpv6[plane] = false;
        return this;
    }

    /**
     * The peer's IPv6 address and MAC on a plane: packets on that plane go over IPv6 (S2.1), from this
     * endpoint's {@link SprayConfig#localIpv6 IPv6 address} there.
     *
     * @return this.
     */
    public SprayConnectionConfig remoteIpv6(final int plane, final long high, final long low, final long mac)
    {
        remoteIpv6High[plane] = high;
        remoteIpv6Low[plane] = low;
        remoteMac[plane] = mac;
        remoteIsIpv6[plane] = true;
        return this;
    }

    /** @return the peer's address on {@code plane} as 128 bits, first 64 (0 for an IPv4 peer, IPv4-mapped). */
    public long remoteHigh(final int plane)
    {
        return remoteIsIpv6[plane] ? remoteIpv6High[plane] : 0;
    }

    /** @return the peer's address on {@code plane} as 128 bits, last 64 ({@code ::ffff:a.b.c.d} for IPv4; 0 for none). */
    public long remoteLow(final int plane)
    {
        return remoteIsIpv6[plane] ? remoteIpv6Low[plane] :
            0 == remoteIpv4[plane] ? 0 : io.spraynic.pmd.InterfaceAddress.mappedLow(remoteIpv4[plane]);
    }

    /** @param port UDP source port of path 0; path i uses {@code port + i} (S2.2). @return this. */
    public SprayConnectionConfig sourcePortBase(final int port)
    {
        this.sourcePortBase = port;
        return this;
    }

    /**
     * @param send     most send work requests (and READ responses) in flight.
     * @param receive  most receives posted.
     * @param inbound  most inbound messages tracked at once.
     * @return this.
     */
    public SprayConnectionConfig depths(final int send, final int receive, final int inbound)
    {
        this.sendQueueDepth = send;
        this.receiveQueueDepth = receive;
        this.maxInboundMessages = inbound;
        return this;
    }

    /**
     * @param chunks blocks of 512 bits recording which packets of the messages being received were placed
     *               (S4.4: each (stream, MSN, offset) counted once even when a packet moved paths, S7.4); one
     *               chunk covers 512 packets of one message.
     * @return this.
     */
    public SprayConnectionConfig placementChunks(final int chunks)
    {
        this.placementChunks = chunks;
        return this;
    }

    /**
     * @param reads READ requests this end serves at once, 1..255 (S10.2: advertised in CONH, as RoCEv2's responder
     *              resources; a READ beyond it is refused with an RNR NACK and retried).
     * @return this.
     */
    public SprayConnectionConfig responderReads(final int reads)
    {
        if (reads < 1 || reads > MAX_READS)
        {
            throw new IllegalArgumentException("responder reads must be in 1..255: " + reads);
        }
        this.responderReads = reads;
        return this;
    }

    /**
     * Takes the limits the peer advertised (S10.2; CONH {@code window}, {@code reads}), as any input, hostile:
     * 0 (not advertised) means the defaults, anything else is held to what CONH can carry. The sender never has
     * more messages started and not completed than the window, nor more READs than the limit (the rest wait).
     *
     * @return this.
     */
    SprayConnectionConfig peerLimits(final int window, final int reads)
    {
        peerWindow = window <= 0 ? DEFAULT_WINDOW : Math.min(window, MAX_WINDOW);
        peerReads = reads <= 0 ? DEFAULT_READS : Math.min(reads, MAX_READS);
        return this;
    }

    /**
     * Checks the parameters a connection is opened with (control path, when {@link SprayEngine} opens it).
     *
     * @throws IllegalArgumentException naming the first one out of range.
     */
    void validate()
    {
        if (paths < 1 || paths > 64)
        {
            throw new IllegalArgumentException("paths must be in 1..64: " + paths);
        }
        if (!PathMtu.isValid(mtu))
        {
            throw new IllegalArgumentException("MTU must be 256, 512, 1024, 2048 or 4096: " + mtu);
        }
        if (streams < 1 || streams > 65536)
        {
            throw new IllegalArgumentException("streams must be in 1..65536: " + streams);
        }
        if (sendQueueDepth < 1 || sendQueueDepth > 32768 || receiveQueueDepth < 1 || maxInboundMessages < 1)
        {
            throw new IllegalArgumentException("queue depths must be in 1..32768");
        }
        if (responderReads < 1 || responderReads > MAX_READS || peerWindow < 1 ||
            peerReads < 1)
        {
            throw new IllegalArgumentException("READ limits must be in 1..255 and the peer's window at least 1");
        }
        if (null == sendCq || null == receiveCq)
        {
            throw new IllegalArgumentException("completion queues are required");
        }
    }

    /** @return the inbound message window this end advertises (S10.2): its records less the reserve. */
    int advertisedWindow()
    {
        return Math.min(MAX_WINDOW, InboundWindow.windowFor(maxInboundMessages));
    }

    /** @param send completions of sends. @param receive completions of receives. @return this. */
    public SprayConnectionConfig completionQueues(final CompletionQueue send, final CompletionQueue receive)
    {
        this.sendCq = send;
        this.receiveCq = receive;
        return this;
    }
}
