package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.FrameSink;
import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.agrona.collections.Int2ObjectHashMap;

import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * The spray transport engine of one endpoint (docs/PROTOCOL.md): its connections, fed parsed packets
 * and time, writing frames into a {@link FrameSink} with one output per plane. Pure protocol: no
 * DPDK, no thread, no clock of its own, so the same code runs on DPDK ports in real time (driven by the NIC's
 * worker loop, {@code nic.NicWorker}), over in-JVM links, or in a virtual-time fabric simulator
 * ({@code fabric.SprayFabricEndpoint}).
 * Single-threaded: every call, posting work requests included, comes from the thread that drives it.
 * <ul>
 *     <li>{@link #onFrame} takes one well-formed packet (the parser, built on {@link SprayOpcodes#TABLE},
 *     said ROCE) and hands it to the connection its DestQP names (S3.2); packets naming no connection are
 *     counted and dropped (S9.5). Payload is placed before it returns, so the caller may free the buffer.</li>
 *     <li>{@link #onTick} runs every connection's timers (delayed ACKs, probes, RTOs, RNR retries) and
 *     sends new data, paced, connections taking turns.</li>
 * </ul>
 */
public final class SprayEngine
{
    private final SprayConfig config;
    private final ProtectionDomain protectionDomain;
    private final FrameSink output;
    private final RoceFrameWriter[] writers;
    private final TransportCounters counters = SprayCounters.create();
    private final FairShareRateHint rateHint;
    private final SplittableRandom random;
    private final PathScheduler.Shared pathSchedulers;
    private final SecureRandom secrets;
    private final Int2ObjectHashMap<SprayConnection> byCid = new Int2ObjectHashMap<>();
    // issue 13: the connection the last frame named, and its CID: a burst's frames mostly name one connection, so
    // they skip the map's hash and probe. Exactly the map's answer: set from it, cleared when the map forgets it
    private SprayConnection lastFound;
    private int lastFoundCid;
    private final SprayConnection[] slots;
    /**
     * With {@link SprayConfig#idleTickNanos}: the connections ticked on every tick (those with tables, or with work:
     * not {@link SprayConnection#isIdle idle}), each also named by its slot in {@code hotBySlot}. The others are
     * parked: an idle connection without tables, ticked only by the sweep, which visits each once per
     * {@code idleTickNanos} in turn, so that a tick costs in proportion to the busy connections, not to all of them
     * (issue 13). A parked connection becomes hot again when a frame for it arrives, the application posts to it,
     * it begins to close or fails locally ({@link #markHot}).
     */
    private SprayConnection[] hot = new SprayConnection[16];
    private int hotCount;
    private final SprayConnection[] hotBySlot;
    private int sweepCursor;
    private long sweepCredit; // connection-nanoseconds of sweeping owed: a visit per idleTickNanos of it
    private long lastSweepAt = Long.MIN_VALUE;
    private long idleTicksSkipped;
    private SprayConnection[] active = new SprayConnection[0];
    private int activeCount;
    /** No free connection slot below this index. */
    private int lowestFreeSlot;
    private final ConnectionStoragePool storagePool;
    private final SprayHandshake handshake;
    private final ClosedCidQuarantine closedCids;
    private long lastTickNanos;
    private int roundRobin;
    /** S6.4-2: between {@link #beginReceiveBurst} and {@link #endReceiveBurst}; the ACKs owed then wait for its end. */
    private boolean receivingBurst;
    /** Connections owing ACKs at the end of the receive burst, each once. */
    private final SprayConnection[] owingAcks;
    private int owingAcksCount;

    /**
     * @param config           this endpoint's addresses and protocol settings.
     * @param protectionDomain the memory its connections may touch.
     * @param output           where frames go, one plane per port.
     */
    public SprayEngine(final SprayConfig config, final ProtectionDomain protectionDomain, final FrameSink output)
    {
        this.config = config;
        this.protectionDomain = protectionDomain;
        this.output = output;
        this.rateHint = new FairShareRateHint(config.capacityMbps, config.activityWindowNanos, config.maxConnections);
        this.random = new SplittableRandom(config.seed);
        this.pathSchedulers = new PathScheduler.Shared(config, PathScheduler.MAX_PATHS);
        this.secrets = secrets(config);
        this.slots = new SprayConnection[config.maxConnections];
        this.owingAcks = new SprayConnection[config.maxConnections];
        this.hotBySlot = new SprayConnection[config.maxConnections];
        this.closedCids = new ClosedCidQuarantine(2 * config.connectionTimeoutNanos);
        // one writer per plane: each keeps its ICRC view of one plane's buffer memory
        this.writers = new RoceFrameWriter[config.planes];
        for (int i = 0; i < writers.length; i++)
        {
            writers[i] = new RoceFrameWriter(SprayOpcodes.TABLE);
        }
        this.handshake = new SprayHandshake(this);
        this.storagePool = new ConnectionStoragePool(config.storagePrewarm, config.storageLimit());
    }

    // S12.2: every secret from SecureRandom; a seeded SHA1PRNG (deterministic once seeded before first use) only
    // when the configuration asks for reproducible, insecure secrets (simulator)
    private static SecureRandom secrets(final SprayConfig config)
    {
        if (!config.deterministicSecrets)
        {
            return new SecureRandom();
        }
        try
        {
            final SecureRandom seeded = SecureRandom.getInstance("SHA1PRNG");
            seeded.setSeed(config.seed);
            return seeded;
        }
        catch (final NoSuchAlgorithmException e)
        {
            throw new IllegalStateException("SHA1PRNG is missing: deterministic secrets are not available", e);
        }
    }

    /**
     * Opens a connection whose parameters both ends agreed (control path; allocates).
     *
     * @param connection its parameters.
     * @return the connection, ESTABLISHED.
     * @throws IllegalArgumentException for bad parameters, an MTU whose frames the output cannot carry, a CID in use
     *                                  or closed too recently (S9.2), or no room.
     */
    public SprayConnection open(final SprayConnectionConfig connection)
    {
        SprayFrameSize.requireFits(config, connection, output.maxFrameLength(), false);
        requireCidFree(connection.localCid);
        int index = -1;
        for (int i = lowestFreeSlot; i < slots.length; i++)
        {
            if (null == slots[i])
            {
                index = i;
                break;
            }
        }
        if (index < 0)
        {
            throw new IllegalArgumentException("no room for another connection: " + slots.length);
        }
        final SprayConnection c = new SprayConnection(this, index, connection);
        slots[index] = c;
        lowestFreeSlot = index + 1;
        byCid.put(connection.localCid, c);
        if (activeCount == active.length)
        {
            active = Arrays.copyOf(active, Math.max(16, 2 * activeCount)); // 100,000 opens: not quadratic
        }
        active[activeCount++] = c;
        markHot(c);
        return c;
    }

    /**
     * Starts a connection on the wire (S9.1): sends {@code SPRAY_CONNECT} now and again with backoff until a
     * {@code SPRAY_CONNECT_ACK} answers; the connection is then opened with the negotiated limits.
     *
     * @param connection this side's parameters: its CID (0: the engine draws a random free one of its partition,
     *                   S12.2), limits, the peer's addresses per plane, queues; the initial PSN is always drawn
     *                   from SecureRandom (whatever is given is replaced); the peer's CID and initial PSN and both
     *                   keys come from the exchange.
     * @param nowNanos   the time.
     * @return the request, whose {@link SprayHandshake.Pending#connection()} is set once ESTABLISHED, or whose
     * {@link SprayHandshake.Pending#reason()} says why it FAILED.
     * @throws IllegalArgumentException if the given CID is in use or quarantined, or the output cannot carry frames
     *                                  of the MTU.
     * @throws IllegalStateException if this engine has no free CID or no room for another connection.
     */
    public SprayHandshake.Pending connect(final SprayConnectionConfig connection, final long nowNanos)
    {
        return connect(connection, nowNanos, SprayHandshake.NO_DEADLINE);
    }

    /**
     * {@link #connect(SprayConnectionConfig, long)} for an application that waits until {@code giveUpAtNanos}: the
     * CONNECTs go on past {@link SprayHandshake#CONNECT_TRIES} (at most {@link SprayHandshake#CONNECT_BACKOFF_MAX_NANOS}
     * apart) until then, so that a peer that starts late, or a host too loaded to answer within the 8 tries, is still
     * reached (S9.1).
     *
     * @param giveUpAtNanos when to give up, on the clock of {@code nowNanos}; {@link SprayHandshake#NO_DEADLINE} for
     *                      none beyond the 8 tries.
     */
    public SprayHandshake.Pending connect(final SprayConnectionConfig connection, final long nowNanos,
        final long giveUpAtNanos)
    {
        SprayFrameSize.requireFits(config, connection, output.maxFrameLength(), false); // before a CONNECT offers it
        if (0 == connection.localCid)
        {
            final int cid = newCid();
            if (cid < 0)
            {
                throw new IllegalStateException("no free CID in this engine's partition");
            }
            connection.localCid = cid;
        }
        requireCidFree(connection.localCid);
        if (!hasRoom())
        {
            throw new IllegalStateException("no room for another connection: " + slots.length);
        }
        return handshake.connect(connection, nowNanos, giveUpAtNanos);
    }

    /** @return whether another connection fits ({@link SprayConfig#maxConnections}). */
    public boolean hasRoom()
    {
        return byCid.size() < slots.length;
    }

    /**
     * @return a random CID (S12.2: SecureRandom, 24 bits, nonzero) in this engine's {@link SprayConfig#cidPartition
     * partition} that {@link #isCidFree is free}, or -1 when 1,000 draws found none.
     */
    public int newCid()
    {
        final int count = config.cidPartitions();
        final int index = config.cidPartition();
        for (int i = 0; i < 1_000; i++)
        {
            final int draw = secrets.nextInt(1 << 24);
            final int cid = draw - draw % count + index;
            if (cid != 0 && cid <= 0xFF_FFFF && isCidFree(cid))
            {
                return cid;
            }
        }
        return -1;
    }

    /**
     * @param cid a local CID.
     * @return whether a new connection may take it: no connection has it, and none was forgotten with it within
     * {@code 2 x connectionTimeout} (S9.2), so no late packet of an old connection can reach the new one.
     */
    public boolean isCidFree(final int cid)
    {
        return !byCid.containsKey(cid) && closedCids.heldFor(cid, lastTickNanos) == 0 && !handshake.isPendingCid(cid);
    }

    private void requireCidFree(final int cid)
    {
        if (byCid.containsKey(cid) || handshake.isPendingCid(cid))
        {
            throw new IllegalArgumentException("CID in use: 0x" + Integer.toHexString(cid));
        }
        final long held = closedCids.heldFor(cid, lastTickNanos);
        if (held > 0)
        {
            throw new IllegalArgumentException("CID 0x" + Integer.toHexString(cid) + " was closed recently and is not " +
                "reused for 2 x connectionTimeout (S9.2): free again in " + (held + 999_999) / 1_000_000 +
                " ms; pick another CID");
        }
    }

    /**
     * Accepts connections (S9.1): each {@code SPRAY_CONNECT} opens one from {@code template} (limits, queues,
     * source ports), with a fresh CID and initial PSN.
     *
     * @param template this side's limits and queues.
     * @param resolver the initiator's addresses on planes other than the one the CONNECT came on.
     * @throws IllegalArgumentException if the output cannot carry frames of the template's MTU.
     */
    public void listen(final SprayConnectionConfig template, final SprayHandshake.PeerResolver resolver)
    {
        listen(template, resolver, null);
    }

    /**
     * Accepts connections as {@link #listen(SprayConnectionConfig, SprayHandshake.PeerResolver)} does, telling
     * {@code listener} of each.
     */
    public void listen(
        final SprayConnectionConfig template,
        final SprayHandshake.PeerResolver resolver,
        final SprayHandshake.AcceptListener listener)
    {
        // every accepted MTU is at most the template's (S9.1): one that fits here fits every connection
        SprayFrameSize.requireFits(config, template, output.maxFrameLength(), true);
        handshake.listen(template, resolver, listener);
    }

    /**
     * Closes a connection forcefully (control path): every unfinished work request completes with
     * {@code WR_FLUSH_ERR}, nothing goes on the wire, and its CID names nothing from now on (S9.5); the peer
     * learns of it only by the packets then counted as for an unknown connection. See
     * {@link #close(SprayConnection, long)} for the graceful close.
     */
    public void close(final SprayConnection connection)
    {
        connection.abort();
        forget(connection);
    }

    /**
     * Starts closing a connection gracefully (S9.2): it takes no new work, its outstanding messages finish,
     * then {@code SPRAY_CLOSE} goes to the peer, which answers and forgets the connection; so does this end on
     * the answer (or after {@link SprayConnection#CLOSE_TRIES} tries, or when draining took longer than
     * {@code connectionTimeout}: then the rest is flushed). Poll {@link SprayConnection#state()} or
     * {@link SprayConnection#isClosed()}; keep ticking meanwhile.
     *
     * @return false if the connection was not ESTABLISHED.
     */
    public boolean close(final SprayConnection connection, final long nowNanos)
    {
        return connection.beginClose(nowNanos);
    }

    void forget(final SprayConnection connection)
    {
        if (byCid.get(connection.localCid()) == connection)
        {
            byCid.remove(connection.localCid());
            if (lastFound == connection)
            {
                lastFound = null;
            }
            final PacketAuthenticator auth = connection.authenticator();
            closedCids.add(connection.localCid(), lastTickNanos, connection.remoteCid(), auth.sendKey0(), auth.sendKey1(),
                auth.receiveKey0(), auth.receiveKey1());
            slots[connection.index()] = null;
            lowestFreeSlot = Math.min(lowestFreeSlot, connection.index());
            active = byCid.values().toArray(new SprayConnection[0]);
            activeCount = active.length;
            handshake.forget(connection);
        }
    }

    /**
     * @param cid a local CID.
     * @return its connection, or null.
     */
    public SprayConnection connection(final int cid)
    {
        return byCid.get(cid);
    }

    /**
     * Takes one parsed packet.
     *
     * @param frame    a frame the parser classified ROCE.
     * @param nowNanos the time.
     */
    public void onFrame(final RoceFrame frame, final long nowNanos)
    {
        if (!frame.isRoce() || null == SprayOpcodes.name(frame.opcode()))
        {
            counters.increment(SprayCounters.NOT_SPRAY); // a RoCEv2 packet of another transport: none runs here
            return;
        }
        if (frame.opcode() == SprayOpcodes.CONNECT)
        {
            handshake.onConnect(frame, nowNanos);
            return;
        }
        if (frame.opcode() == SprayOpcodes.CONNECT_ACK && handshake.onConnectAck(frame, nowNanos))
        {
            return;
        }
        if (frame.opcode() == SprayOpcodes.CONNECT_RETRY || frame.opcode() == SprayOpcodes.CONNECT_REJECT)
        {
            handshake.onRetryOrReject(frame, nowNanos); // answers to this engine's CONNECTs only: no connection's
            return;
        }
        final SprayConnection c = connectionOf(frame.destQp());
        if (null == c || c.isClosed())
        {
            if (frame.opcode() == SprayOpcodes.CLOSE)
            {
                onCloseForUnknown(frame);
                return;
            }
            counters.increment(SprayCounters.UNKNOWN_CONNECTION);
            return;
        }
        markHot(c);
        c.onFrame(frame, nowNanos);
    }

    // the map's connection of a frame's destination CID, the last one found answering again without the map
    private SprayConnection connectionOf(final int cid)
    {
        final SprayConnection last = lastFound;
        if (null != last && cid == lastFoundCid)
        {
            return last;
        }
        final SprayConnection found = byCid.get(cid);
        if (null != found)
        {
            lastFound = found;
            lastFoundCid = cid;
        }
        return found;
    }

    /**
     * S6.4-2: a receive burst begins: until {@link #endReceiveBurst}, an ACK that packets call for waits for its
     * end, one per path for all of them. Without it (a caller handing packets over one at a time) ACKs go at once.
     */
    public void beginReceiveBurst()
    {
        receivingBurst = true;
    }

    /**
     * S6.4-2: the receive burst ended (before the engine's timers run and the TX burst goes): each connection
     * sends the ACKs its packets called for, one per path.
     *
     * @return ACKs sent.
     */
    public int endReceiveBurst()
    {
        receivingBurst = false;
        final int count = owingAcksCount;
        owingAcksCount = 0;
        int sent = 0;
        for (int k = 0; k < count; k++)
        {
            final SprayConnection c = owingAcks[k];
            owingAcks[k] = null;
            sent += c.sendOwedAcks();
        }
        return sent;
    }

    /** @return whether a receive burst is being handled (ACKs wait for its end, S6.4-2). */
    boolean isReceivingBurst()
    {
        return receivingBurst;
    }

    /**
     * Lists {@code connection} among those owing ACKs at the end of the receive burst (once: it tracks whether it
     * is listed).
     *
     * @return false when no more fit (connections forgotten and opened within the burst): it acknowledges at once.
     */
    boolean listOwingAcks(final SprayConnection connection)
    {
        if (owingAcksCount == owingAcks.length)
        {
            return false;
        }
        owingAcks[owingAcksCount++] = connection;
        return true;
    }

    // S9.2: our CLOSE_ACK was lost and the CLOSE is answered again, but only (S12.3) for a connection closed
    // recently enough that its keys are still held, and only when the CLOSE's tag verifies with them
    private void onCloseForUnknown(final RoceFrame frame)
    {
        final int entry = closedCids.find(frame.destQp(), lastTickNanos);
        if (entry < 0)
        {
            counters.increment(SprayCounters.UNKNOWN_CONNECTION);
            return;
        }
        if (!PacketAuthenticator.controlTagValid(closedCids.key(entry, 2), closedCids.key(entry, 3), frame) ||
            ConnectionHeader.senderCid(frame.segment(), frame.customHeaderOffset()) != closedCids.remoteCid(entry))
        {
            counters.increment(SprayCounters.AUTH_FAILURES);
            return;
        }
        handshake.onCloseForUnknown(frame, closedCids.key(entry, 0), closedCids.key(entry, 1));
    }

    /**
     * Runs timers and sends what is due, each connection in turn, starting one further along each call. With
     * {@link SprayConfig#idleTickNanos} only the hot connections are ticked every time, and a connection idle without
     * tables once per that interval (4,000 connections ticked on every tick cost milliseconds per tick, and the few
     * with traffic waited for them; 100,000 idle ones cost hundreds of milliseconds, benchmarks/RESULTS.md section 29).
     *
     * @param nowNanos the time.
     * @return work done (frames written and timer events).
     */
    public int onTick(final long nowNanos)
    {
        lastTickNanos = nowNanos;
        pathSchedulers.rttLimits.ageLateMarginSeed(nowNanos, config.connectionTimeoutNanos);
        final int connects = handshake.onTick(nowNanos);
        if (activeCount == 0)
        {
            return connects;
        }
        return connects + (0 == config.idleTickNanos ? tickAll(nowNanos) : tickHot(nowNanos) + sweepParked(nowNanos));
    }

    // every connection on every tick, in turn
    private int tickAll(final long nowNanos)
    {
        final SprayConnection[] cs = active;
        final int n = activeCount;
        for (int k = 0; k < n; k++)
        {
            final SprayConnection c = cs[k];
            rateHint.busy(c.index(), c.inboundMessagesInUse() > 0);
        }
        rateHint.refresh(nowNanos);
        int work = 0;
        final int start = Integer.remainderUnsigned(roundRobin++, n); // the counter wraps within minutes of ticks
        for (int k = 0; k < n; k++)
        {
            work += cs[(start + k) % n].onTick(nowNanos);
        }
        return work;
    }

    // the hot connections, in turn; then those that went idle without tables are parked
    private int tickHot(final long nowNanos)
    {
        final SprayConnection[] cs = hot;
        final int n = hotCount;
        for (int k = 0; k < n; k++)
        {
            final SprayConnection c = cs[k];
            rateHint.busy(c.index(), c.inboundMessagesInUse() > 0);
        }
        rateHint.refresh(nowNanos);
        int work = 0;
        if (n > 0)
        {
            final int start = Integer.remainderUnsigned(roundRobin++, n); // the counter wraps within minutes of ticks
            for (int k = 0; k < n; k++)
            {
                final SprayConnection c = cs[(start + k) % n];
                if (!c.isClosed()) // forgotten during this walk: not ticked again
                {
                    work += c.onTick(nowNanos);
                }
            }
        }
        for (int k = hotCount - 1; k >= 0; k--)
        {
            final SprayConnection c = hot[k];
            if (c.isClosed() || (!c.holdsStorage() && c.isIdle()))
            {
                rateHint.busy(c.index(), false);
                if (hotBySlot[c.index()] == c)
                {
                    hotBySlot[c.index()] = null;
                }
                hot[k] = hot[--hotCount];
                hot[hotCount] = null;
            }
        }
        return work;
    }

    // the parked connections' slow timers (keepalive, idle timeout): each visited once per idleTickNanos
    private int sweepParked(final long nowNanos)
    {
        final SprayConnection[] cs = active;
        final int n = activeCount;
        if (lastSweepAt == Long.MIN_VALUE || nowNanos < lastSweepAt)
        {
            lastSweepAt = nowNanos;
        }
        sweepCredit += Math.min(nowNanos - lastSweepAt, config.idleTickNanos) * n;
        lastSweepAt = nowNanos;
        final long visits = sweepCredit / config.idleTickNanos;
        sweepCredit -= visits * config.idleTickNanos;
        int work = 0;
        int ticked = 0;
        for (long v = 0; v < visits; v++)
        {
            if (sweepCursor >= n)
            {
                sweepCursor = 0;
            }
            final SprayConnection c = cs[sweepCursor++];
            if (hotBySlot[c.index()] == c || c.isClosed())
            {
                continue;
            }
            work += c.onTick(nowNanos);
            ticked++;
            if (!c.isClosed() && (c.holdsStorage() || !c.isIdle()))
            {
                markHot(c);
            }
        }
        idleTicksSkipped += Math.max(0, n - hotCount - ticked);
        return work;
    }

    /** @return whether the connection is ticked on every tick now (with {@link SprayConfig#idleTickNanos}; tests). */
    boolean isHot(final SprayConnection c)
    {
        return hotBySlot[c.index()] == c;
    }

    /** The connection is ticked on every tick from now on, until it is idle without tables again (engine thread). */
    void markHot(final SprayConnection c)
    {
        final int slot = c.index();
        if (hotBySlot[slot] == c)
        {
            return;
        }
        hotBySlot[slot] = c;
        if (hotCount == hot.length)
        {
            hot = Arrays.copyOf(hot, 2 * hotCount); // grows to the busy set once, then never
        }
        hot[hotCount++] = c;
    }

    /** @return true when every connection {@link SprayConnection#isIdle() is idle}: ticks can stop. */
    public boolean isIdle()
    {
        for (int k = 0; k < activeCount; k++)
        {
            if (!active[k].isIdle())
            {
                return false;
            }
        }
        return true;
    }

    /** @return the engine's own counters (S9.5 unknown connections, malformed packets). */
    public TransportCounters counters()
    {
        return counters;
    }

    /** @return the configuration. */
    public SprayConfig config()
    {
        return config;
    }

    /** @return the protection domain. */
    public ProtectionDomain protectionDomain()
    {
        return protectionDomain;
    }

    /** @return the tables this engine's connections borrow while they have traffic. */
    ConnectionStoragePool storagePool()
    {
        return storagePool;
    }

    /**
     * @return whether an unsolicited answer may go now within the engine's response rate (S12.9), taking a token:
     * RETRYs, REJECTs and the RNR NACKs of S10.2, so that no packet draws more than a bounded rate of answers.
     */
    boolean tryRespond(final long now)
    {
        return handshake.tryRespond(now);
    }

    SprayHandshake handshake()
    {
        return handshake;
    }

    RoceFrameWriter writer(final int plane)
    {
        return writers[plane];
    }

    FrameSink output()
    {
        return output;
    }

    FairShareRateHint rateHint()
    {
        return rateHint;
    }

    SplittableRandom random()
    {
        return random;
    }

    /** @return what the path schedulers of this engine's connections share (engine thread only). */
    PathScheduler.Shared pathSchedulers()
    {
        return pathSchedulers;
    }

    /** @return where secrets come from (S12.2): tokens, CIDs, initial PSNs, keys. */
    SecureRandom secrets()
    {
        return secrets;
    }

    /** @return ticks of idle connections without tables left out ({@link SprayConfig#idleTickNanos}; tests). */
    long idleTicksSkipped()
    {
        return idleTicksSkipped;
    }

    /** @return connections open now. */
    public int connectionCount()
    {
        return byCid.size();
    }

    /**
     * The connection-table pool's figures (issue 13), for the NIC's counters and benchmarks; read on the engine's
     * thread, or once it stopped.
     *
     * @param figure {@link #STORAGE_SETS_LENT}, {@link #STORAGE_SETS_LENT_PEAK}, {@link #STORAGE_SETS_MADE},
     *               {@link #STORAGE_TAKES_REFUSED} or {@link #STORAGE_BYTES}.
     * @return its value.
     */
    public long storageFigure(final int figure)
    {
        return switch (figure)
        {
            case STORAGE_SETS_LENT -> storagePool.lent();
            case STORAGE_SETS_LENT_PEAK -> storagePool.lentPeak();
            case STORAGE_SETS_MADE -> storagePool.created();
            case STORAGE_TAKES_REFUSED -> storagePool.exhausted();
            case STORAGE_BYTES -> storagePool.bytes();
            default -> throw new IllegalArgumentException("no storage figure " + figure);
        };
    }

    /** {@link #storageFigure}: sets of connection tables lent now. */
    public static final int STORAGE_SETS_LENT = 0;
    /** {@link #storageFigure}: the most sets lent at once. */
    public static final int STORAGE_SETS_LENT_PEAK = 1;
    /** {@link #storageFigure}: sets made so far (lent or in the pool). */
    public static final int STORAGE_SETS_MADE = 2;
    /** {@link #storageFigure}: borrows refused at the storage limit (the connection waited). */
    public static final int STORAGE_TAKES_REFUSED = 3;
    /** {@link #storageFigure}: bytes of every set made. */
    public static final int STORAGE_BYTES = 4;
    /**
     * The reordering window's figures (S6.5-3), for the NIC's counters: read on the engine's thread, or once it stopped.
     *
     * @param figure {@link #REORDER_WINDOW_NANOS} or {@link #REORDER_SPURIOUS_LOSSES}.
     * @return its value.
     */
    public long reorderFigure(final int figure)
    {
        final ReorderWindow window = pathSchedulers.rttLimits.reorderWindow;
        return switch (figure)
        {
            case REORDER_WINDOW_NANOS -> window.nanos();
            case REORDER_SPURIOUS_LOSSES -> window.spuriousLosses();
            default -> throw new IllegalArgumentException("no reorder figure " + figure);
        };
    }

    /** {@link #reorderFigure}: the window the engine holds gaps by now, as learnt (before a path's cap), ns. */
    public static final int REORDER_WINDOW_NANOS = 0;
    /** {@link #reorderFigure}: losses found spurious (reordering, not loss) since the engine started. */
    public static final int REORDER_SPURIOUS_LOSSES = 1;
    /** Labels of the reorder figures, by number. */
    public static final java.util.List<String> REORDER_FIGURE_LABELS = java.util.List.of("reorder window ns",
        "reorder losses found spurious");

    /** Labels of the storage figures, by number. */
    public static final java.util.List<String> STORAGE_FIGURE_LABELS = java.util.List.of("storage sets lent",
        "storage sets lent at peak", "storage sets made", "storage borrows refused at the limit", "storage bytes");
}
