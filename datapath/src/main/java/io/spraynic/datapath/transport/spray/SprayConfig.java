package io.spraynic.datapath.transport.spray;

/**
 * One endpoint's addresses and protocol settings, defaults from docs/PROTOCOL.md S11. A mutable
 * builder read once when connections are opened (control path). Times in nanoseconds.
 */
public final class SprayConfig
{
    int planes = 1;
    int[] localIpv4 = new int[1];
    long[] localMac = new long[1];
    long[] localIpv6High = new long[1];
    long[] localIpv6Low = new long[1];
    int[] vlanTci = {-1};
    boolean[] ipv6UdpChecksum = {true};
    long capacityMbps = 100_000;
    long activityWindowNanos = 20_000;
    /** The largest {@link #maxConnections}: 4 Mi slots, about 100 MB of connection table per engine. */
    public static final int MAX_CONNECTIONS_LIMIT = 1 << 22;
    /** The longest a port stays suspect (S7.7.1): an hour, far beyond any link repair a transport should wait for. */
    public static final long MAX_SUSPECT_PORT_NANOS = 3_600_000_000_000L;

    int maxConnections = 64;
    int storagePrewarm = 4;
    int storageLimit = -1;
    long storageLingerNanos = 1_000_000;
    long idleTickNanos;
    int ackEvery = 8;
    long ackDelayNanos = 4_000;
    long probeMinNanos = 10_000;
    long rtoMinNanos = 50_000;
    long rtoSlackNanos = 1_000;
    long rtoMaxNanos = 10_000_000;
    long lateMarginMaxNanos;
    long reorderWindowNanos;
    long reorderWindowMaxNanos;
    long initialRttNanos = 10_000;
    int failAfterTimeouts = 3;
    long probeIntervalNanos = 1_000_000;
    long connectionTimeoutNanos = 1_000_000_000;
    double repathLoss = 0.05;
    double repathRttFactor = 3;
    int rotateMinPackets = 16;
    int rotateMaxPackets = 32;
    long suspectPortNanos = 1_000_000_000;
    int initialWindow = 16;
    int maxWindow = 256;
    double gain = 1.0 / 16;
    int rnrRetries = 7;
    int rnrTimerMicros = 10;
    int burstBytes = 64 * 1024;
    long burstNanos = 4_000;
    int startBudgetBytes = 8 * 1024;
    int maxPacketsPerTick = 512;
    long seed = 1;
    int dscp;
    long connectBackoffNanos = SprayHandshake.CONNECT_BACKOFF_NANOS;
    int cidPartition;
    int cidPartitions = 1;
    long idleTimeoutNanos = 30_000_000_000L;
    long keepaliveIntervalNanos = -1;
    int maxConnectionsPerSource = 16;
    int connectResponsesPerSecond = 50_000;
    int connectResponseBurst = 256;
    long cookieEpochNanos = 4_000_000_000L;
    byte[] psk;
    boolean deterministicSecrets;

    /**
     * @param planes ports of this endpoint; plane addresses default to 0.
     * @return this.
     */
    public SprayConfig planes(final int planes)
    {
        if (planes < 1 || planes > 64)
        {
            throw new IllegalArgumentException("planes must be in 1..64: " + planes);
        }
        this.planes = planes;
        this.localIpv4 = java.util.Arrays.copyOf(localIpv4, planes);
        this.localMac = java.util.Arrays.copyOf(localMac, planes);
        this.localIpv6High = java.util.Arrays.copyOf(localIpv6High, planes);
        this.localIpv6Low = java.util.Arrays.copyOf(localIpv6Low, planes);
        final int tagged = vlanTci.length;
        this.vlanTci = java.util.Arrays.copyOf(vlanTci, planes);
        java.util.Arrays.fill(vlanTci, Math.min(tagged, planes), planes, -1);
        final int checksummed = ipv6UdpChecksum.length;
        this.ipv6UdpChecksum = java.util.Arrays.copyOf(ipv6UdpChecksum, planes);
        java.util.Arrays.fill(ipv6UdpChecksum, Math.min(checksummed, planes), planes, true);
        return this;
    }

    /**
     * This endpoint's IPv6 address on a plane (S2.1), used towards peers given an IPv6 address on it.
     *
     * @param plane a plane. @param high its first 8 bytes. @param low its last 8 bytes. @return this.
     */
    public SprayConfig localIpv6(final int plane, final long high, final long low)
    {
        localIpv6High[plane] = high;
        localIpv6Low[plane] = low;
        return this;
    }

    /**
     * Tags every frame sent on a plane with an 802.1Q header (S2.1).
     *
     * @param plane a plane. @param tci the tag control information (priority, DEI, VLAN id), -1 for none.
     * @return this.
     */
    public SprayConfig vlan(final int plane, final int tci)
    {
        vlanTci[plane] = tci < 0 ? -1 : tci & 0xFFFF;
        return this;
    }

    /**
     * Whether frames sent over IPv6 on a plane carry the UDP checksum S2.4 requires (default yes). Off only where the
     * port's kernel or hardware writes it ({@link io.spraynic.datapath.port.PacketPort#writesUdpChecksum}): over IPv6
     * it is a pass over the whole payload, which such a port throws away.
     *
     * @param plane a plane. @param write false to leave the checksum to the port. @return this.
     */
    public SprayConfig ipv6UdpChecksum(final int plane, final boolean write)
    {
        ipv6UdpChecksum[plane] = write;
        return this;
    }

    /** @param plane a plane. @param ipv4 this endpoint's address on it. @param mac its MAC. @return this. */
    public SprayConfig local(final int plane, final int ipv4, final long mac)
    {
        localIpv4[plane] = ipv4;
        localMac[plane] = mac;
        return this;
    }

    /** @param mbps ingress capacity C for the fair-share hint (S8.3). @return this. */
    public SprayConfig capacityMbps(final long mbps)
    {
        this.capacityMbps = mbps;
        return this;
    }

    /** @param nanos activity window of S8.3. @return this. */
    public SprayConfig activityWindowNanos(final long nanos)
    {
        this.activityWindowNanos = nanos;
        return this;
    }

    /**
     * @param n most connections the engine holds at once, 1..2^22 (default 64): its connection table is this long, at
     *          about 25 bytes a slot; the tables a connection borrows while it has traffic are bounded apart
     *          ({@link #connectionStorage}, {@link #connectionStorageLimit}).
     * @return this.
     */
    public SprayConfig maxConnections(final int n)
    {
        if (n < 1 || n > MAX_CONNECTIONS_LIMIT)
        {
            throw new IllegalArgumentException("maxConnections must be 1.." + MAX_CONNECTIONS_LIMIT + ": " + n);
        }
        this.maxConnections = n;
        return this;
    }

    /**
     * @param limit most sets of connection tables of one shape, lent or not, as {@link #connectionStorage}'s limit,
     *              the prewarm left as it is: how many connections may have traffic at once, each set a connection
     *              borrows being hundreds of KB at deep queues (benchmarks/RESULTS.md section 19). -1: one set per
     *              connection ({@link #maxConnections}).
     * @return this.
     */
    public SprayConfig connectionStorageLimit(final int limit)
    {
        return connectionStorage(storagePrewarm, limit);
    }

    /**
     * @param prewarm sets of connection tables made for each connection shape when the first connection of that
     *                shape opens (default 4); a connection borrows one while it has traffic ({@link ConnectionStorage}).
     * @param limit   most sets of every shape together, lent or not (prewarmed ones included); -1 (default) for
     *                {@link #maxConnections}: every
     *                connection can have traffic at once. Beyond it a connection with new traffic waits (its posts are
     *                answered QUEUE_FULL, its data packets dropped as no_resources and recovered by the sender).
     * @return this.
     */
    public SprayConfig connectionStorage(final int prewarm, final int limit)
    {
        if (prewarm < 0 || (limit != -1 && limit < 1))
        {
            throw new IllegalArgumentException("storage prewarm must be >= 0 and limit -1 or >= 1: " + prewarm + ", " +
                limit);
        }
        this.storagePrewarm = prewarm;
        this.storageLimit = limit;
        return this;
    }

    /**
     * @param nanos how long a connection stays idle (everything acknowledged and completed, nothing posted) before
     *              it gives its tables back to the pool (default 1 ms; 0: at the first tick it is idle). Keeps a
     *              connection that pauses briefly between messages from clearing tables it takes again at once.
     * @return this.
     */
    public SprayConfig storageLingerNanos(final long nanos)
    {
        if (nanos < 0)
        {
            throw new IllegalArgumentException("storage linger must be >= 0: " + nanos);
        }
        this.storageLingerNanos = nanos;
        return this;
    }

    /**
     * @param nanos how often a connection that holds no tables and is idle (nothing outstanding, no ACK owed, not
     *              closing) is ticked: its timers are the slow ones (keepalive, probes, idle timeout), and an engine of
     *              thousands of connections would otherwise spend each tick walking them (issue 13). 0 (default): on
     *              every tick, as every other connection.
     * @return this.
     */
    public SprayConfig idleTickNanos(final long nanos)
    {
        if (nanos < 0)
        {
            throw new IllegalArgumentException("idle tick must be >= 0: " + nanos);
        }
        this.idleTickNanos = nanos;
        return this;
    }

    /** @return the most sets of connection tables of one shape. */
    int storageLimit()
    {
        return storageLimit == -1 ? maxConnections : storageLimit;
    }

    /** @param packets {@code ackEvery} (S6.4). @return this. */
    public SprayConfig ackEvery(final int packets)
    {
        this.ackEvery = packets;
        return this;
    }

    /** @param nanos {@code ackDelay} (S6.4). @return this. */
    public SprayConfig ackDelayNanos(final long nanos)
    {
        this.ackDelayNanos = nanos;
        return this;
    }

    /** @param nanos {@code probeMin} (S6.7). @return this. */
    public SprayConfig probeMinNanos(final long nanos)
    {
        this.probeMinNanos = nanos;
        return this;
    }

    /** @param min {@code rtoMin}. @param max {@code rtoMax} (S6.8). @return this. */
    public SprayConfig rto(final long min, final long max)
    {
        this.rtoMinNanos = min;
        this.rtoMaxNanos = max;
        return this;
    }

    /**
     * @param nanos the timer granularity added, with {@code ackDelay}, to the least margin of an RTO above the
     *              smoothed RTT (S6.8; default 1 us). @return this.
     */
    public SprayConfig rtoSlackNanos(final long nanos)
    {
        this.rtoSlackNanos = nanos;
        return this;
    }

    /**
     * @param nanos the most the late margin, learnt from spurious timeouts and added to a path's RTO while no
     *              sibling path shows it silent alone, may grow to (S6.8.1; default 0: none is learnt, as on dedicated
     *              cores; {@code EmbeddedNicConfig.sharedCoreSprayConfig} sets 2 s).
     * @return this.
     */
    public SprayConfig lateMarginMaxNanos(final long nanos)
    {
        if (nanos < 0)
        {
            throw new IllegalArgumentException("lateMarginMax must be >= 0 (got " + nanos + ")");
        }
        this.lateMarginMaxNanos = nanos;
        return this;
    }

    /** The longest reordering window (S6.5-3): a second, far beyond any reordering a fabric makes within a route. */
    public static final long MAX_REORDER_WINDOW_NANOS = 1_000_000_000L;

    /**
     * @param nanos the reordering window of S6.5-3, for fabrics that reorder packets within one route (adaptive
     *              routing, a LAG balanced per packet): a packet in a gap is lost only once one sent at least this
     *              long after it is acknowledged (default 0: a gap is loss, S6.5, as ECMP fabrics need).
     * @return this.
     */
    public SprayConfig reorderWindowNanos(final long nanos)
    {
        if (nanos < 0 || nanos > MAX_REORDER_WINDOW_NANOS)
        {
            throw new IllegalArgumentException("reorderWindow must be in 0.." + MAX_REORDER_WINDOW_NANOS + " ns (got " +
                nanos + ")");
        }
        this.reorderWindowNanos = nanos;
        return this;
    }

    /**
     * @param nanos the most the reordering window learns (S6.5-3): above {@link #reorderWindowNanos}, every loss found
     *              spurious widens the engine's window, up to this (default 0: it does not learn).
     * @return this.
     */
    public SprayConfig reorderWindowMaxNanos(final long nanos)
    {
        if (nanos < 0 || nanos > MAX_REORDER_WINDOW_NANOS)
        {
            throw new IllegalArgumentException("reorderWindowMax must be in 0.." + MAX_REORDER_WINDOW_NANOS +
                " ns (got " + nanos + ")");
        }
        this.reorderWindowMaxNanos = nanos;
        return this;
    }

    /** @return the reordering window's floor (S6.5-3), ns. */
    public long reorderWindowNanos()
    {
        return reorderWindowNanos;
    }

    /** @return the most the reordering window learns (S6.5-3), ns; at or below the floor it does not learn. */
    public long reorderWindowMaxNanos()
    {
        return reorderWindowMaxNanos;
    }

    /** @param nanos RTT assumed before the first sample. @return this. */
    public SprayConfig initialRttNanos(final long nanos)
    {
        this.initialRttNanos = nanos;
        return this;
    }

    /** @param timeouts {@code failAfterTimeouts} (S7.4). @return this. */
    public SprayConfig failAfterTimeouts(final int timeouts)
    {
        this.failAfterTimeouts = timeouts;
        return this;
    }

    /** @param nanos {@code probeInterval} (S7.5). @return this. */
    public SprayConfig probeIntervalNanos(final long nanos)
    {
        this.probeIntervalNanos = nanos;
        return this;
    }

    /** @param nanos {@code connectionTimeout} (S7.6). @return this. */
    public SprayConfig connectionTimeoutNanos(final long nanos)
    {
        this.connectionTimeoutNanos = nanos;
        return this;
    }

    /** @param loss {@code repathLoss}. @param rttFactor {@code repathRttFactor} (S7.3). @return this. */
    public SprayConfig repath(final double loss, final double rttFactor)
    {
        this.repathLoss = loss;
        this.repathRttFactor = rttFactor;
        return this;
    }

    /**
     * Source-port rotation (S7.7): a path takes a new UDP source port after a random {@code min} to {@code max}
     * packets (at the first moment after that when it has nothing in flight), so that ECMP spreads a connection
     * over every link in proportion however its ports happen to hash.
     *
     * @param min packets on a port before it rotates, at least 1; 0 turns rotation off. @param max at least min.
     * @return this.
     */
    public SprayConfig portRotation(final int min, final int max)
    {
        if (min < 0 || (min > 0 && max < min) || max > 1 << 20)
        {
            throw new IllegalArgumentException("port rotation needs 0 (off) or 1 <= min <= max <= 2^20: " + min + ", " +
                max);
        }
        this.rotateMinPackets = min;
        this.rotateMaxPackets = min == 0 ? 0 : max;
        return this;
    }

    /**
     * How long a source port a path timed out on stays suspect (S7.7.1) unless an ACK of the path shows it answers:
     * while a plane has one, its paths' new ports are ones that proved healthy since.
     *
     * @param nanos {@code suspectPort}, 0 (no port is ever suspect) to {@link #MAX_SUSPECT_PORT_NANOS} (a port's
     *              expiry is the clock plus it, which must not wrap). @return this.
     */
    public SprayConfig suspectPortNanos(final long nanos)
    {
        if (nanos < 0 || nanos > MAX_SUSPECT_PORT_NANOS)
        {
            throw new IllegalArgumentException("suspectPort must be 0.." + MAX_SUSPECT_PORT_NANOS + " ns: " + nanos);
        }
        this.suspectPortNanos = nanos;
        return this;
    }

    /** @param initial initial cwnd. @param max maximum cwnd (S8.2). @return this. */
    public SprayConfig window(final int initial, final int max)
    {
        this.initialWindow = initial;
        this.maxWindow = max;
        return this;
    }

    /** @param retries {@code rnrRetries} (S9.3). @param timerMicros the RNR timer this receiver asks for. @return this. */
    public SprayConfig rnr(final int retries, final int timerMicros)
    {
        this.rnrRetries = retries;
        this.rnrTimerMicros = timerMicros;
        return this;
    }

    /** @param bytes most the pacer's token bucket holds (S8.4). @return this. */
    public SprayConfig burstBytes(final int bytes)
    {
        this.burstBytes = bytes;
        return this;
    }

    /**
     * @param nanos the pacer's bucket holds this long's worth of the connection's rate (S8.4), at least one packet
     *              and at most {@code burstBytes}: a sender that waited does not then send a burst far above its
     *              share. A thread that shares its core and is descheduled for milliseconds needs milliseconds here.
     * @return this.
     */
    public SprayConfig burstNanos(final long nanos)
    {
        if (nanos <= 0)
        {
            throw new IllegalArgumentException("burstNanos must be positive: " + nanos);
        }
        this.burstNanos = nanos;
        return this;
    }

    /**
     * @param bytes new data a sender may send after it starts again from idle (S8.3.1) before an ACK tells it its
     *              share; -1 turns S8.3.1 off (no start probe, no limit). @return this.
     */
    public SprayConfig startBudgetBytes(final int bytes)
    {
        if (bytes < -1)
        {
            throw new IllegalArgumentException("startBudgetBytes must be -1 (no limit) or >= 0: " + bytes);
        }
        this.startBudgetBytes = bytes;
        return this;
    }

    /** @param packets most new data packets a connection sends per tick. @return this. */
    public SprayConfig maxPacketsPerTick(final int packets)
    {
        this.maxPacketsPerTick = packets;
        return this;
    }

    /** @param dscp DSCP of every packet (S2.3, default 0). @return this. */
    public SprayConfig dscp(final int dscp)
    {
        this.dscp = dscp;
        return this;
    }

    /**
     * @param nanos first retransmission timeout of a CONNECT (S9.1; doubled on each of the 8 tries): the
     *              default suits a data centre; threads that share cores need milliseconds.
     * @return this.
     */
    public SprayConfig connectBackoffNanos(final long nanos)
    {
        if (nanos <= 0)
        {
            throw new IllegalArgumentException("connect backoff must be positive: " + nanos);
        }
        this.connectBackoffNanos = nanos;
        return this;
    }

    /**
     * Splits the CID space between engines that share one set of addresses (the workers of one NIC): the CIDs
     * this engine hands out to accepted connections satisfy {@code cid % count == index}, so any worker can tell
     * from a packet's DestQP which worker owns its connection.
     *
     * @param index this engine's share, 0..count-1.
     * @param count engines sharing the addresses.
     * @return this.
     */
    public SprayConfig cidPartition(final int index, final int count)
    {
        if (count < 1 || count > 256 || index < 0 || index >= count)
        {
            throw new IllegalArgumentException("cid partition " + index + " of " + count + ": need 0 <= index < count <= 256");
        }
        this.cidPartition = index;
        this.cidPartitions = count;
        return this;
    }

    /** @return the CID partition of {@link #cidPartition}. */
    public int cidPartition()
    {
        return cidPartition;
    }

    /** @return engines sharing the CID space. */
    public int cidPartitions()
    {
        return cidPartitions;
    }

    /**
     * @param nanos {@code idleTimeout} (S12.10): a connection that accepted nothing from its peer this long is
     *              closed; 0 turns it off. Default 30 s. @return this.
     */
    public SprayConfig idleTimeoutNanos(final long nanos)
    {
        if (nanos < 0)
        {
            throw new IllegalArgumentException("idleTimeout must be 0 (off) or positive: " + nanos);
        }
        this.idleTimeoutNanos = nanos;
        return this;
    }

    /**
     * @param nanos {@code keepaliveInterval} (S12.10): a connection that sent nothing this long sends a keepalive;
     *              0 turns keepalives off; -1 (default) means {@code idleTimeout / 3}. @return this.
     */
    public SprayConfig keepaliveIntervalNanos(final long nanos)
    {
        if (nanos < -1)
        {
            throw new IllegalArgumentException("keepaliveInterval must be -1 (idleTimeout / 3), 0 (off) or positive: " + nanos);
        }
        this.keepaliveIntervalNanos = nanos;
        return this;
    }

    /** @return the keepalive interval in effect (S12.10). */
    long keepaliveNanos()
    {
        return keepaliveIntervalNanos >= 0 ? keepaliveIntervalNanos : idleTimeoutNanos / 3;
    }

    /**
     * @param n {@code maxConnectionsPerSource} (S12.9): most connections this engine accepts from one source
     *          address (default 16); more are refused with SOURCE_LIMIT. @return this.
     */
    public SprayConfig maxConnectionsPerSource(final int n)
    {
        if (n < 1)
        {
            throw new IllegalArgumentException("maxConnectionsPerSource must be at least 1: " + n);
        }
        this.maxConnectionsPerSource = n;
        return this;
    }

    /**
     * @param perSecond {@code connectResponseRate} (S12.9): CONNECT_RETRYs and CONNECT_REJECTs this engine sends
     *                  per second on average (default 50,000). @param burst most at once (default 256). @return this.
     */
    public SprayConfig connectResponseRate(final int perSecond, final int burst)
    {
        if (perSecond < 1 || burst < 1)
        {
            throw new IllegalArgumentException("connect response rate and burst must be at least 1: " + perSecond + ", " + burst);
        }
        this.connectResponsesPerSecond = perSecond;
        this.connectResponseBurst = burst;
        return this;
    }

    /** @param nanos {@code cookieEpoch} (S12.9): a cookie is valid for one to two epochs (default 4 s). @return this. */
    public SprayConfig cookieEpochNanos(final long nanos)
    {
        if (nanos <= 0)
        {
            throw new IllegalArgumentException("cookieEpoch must be positive: " + nanos);
        }
        this.cookieEpochNanos = nanos;
        return this;
    }

    /**
     * Pre-shared-key mode (S12.2, S12.9): CONNECT and CONNECT_ACK carry an HMAC proof with this key, which is
     * also mixed into the key derivation; a host without it can open no connection to this engine.
     *
     * @param key at least 32 bytes of secret random data, or null for none (the default). @return this.
     */
    public SprayConfig psk(final byte[] key)
    {
        if (null != key && key.length < 32)
        {
            throw new IllegalArgumentException("a pre-shared key needs at least 32 bytes, this one has " + key.length);
        }
        this.psk = null == key ? null : key.clone();
        return this;
    }

    /**
     * INSECURE, for the virtual-time simulator and reproducible experiments only: draws tokens, CIDs, initial
     * PSNs, the cookie secret and X25519 keys from a generator seeded with {@link #seed}, so two runs are
     * identical, and anyone who knows the seed knows every secret. Default false: all of them come from
     * {@link java.security.SecureRandom}.
     *
     * @return this.
     */
    public SprayConfig deterministicSecrets(final boolean deterministic)
    {
        this.deterministicSecrets = deterministic;
        return this;
    }

    /** @param seed for source ports chosen at random (S7.5), never for secrets. @return this. */
    public SprayConfig seed(final long seed)
    {
        this.seed = seed;
        return this;
    }

    public int planes()
    {
        return planes;
    }
}
