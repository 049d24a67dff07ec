package io.spraynic.datapath.fabric;

import java.util.SplittableRandom;

/**
 * One direction of a cable with the output queue that feeds it: a switch egress port, or a NIC's.
 * <p>
 * A frame offered at time {@code t} joins the FIFO queue unless the link is down or blackholed, or the
 * queue cannot hold it (tail drop). If the link is idle it starts serialising at once, otherwise when
 * the frames ahead of it are done; serialising takes {@link LinkConfig#serializationPicos} of its
 * length, and the frame arrives at the far end the propagation delay after its last bit left. Busy time is kept in picoseconds, so back-to-back frames do not accumulate rounding; event
 * times are rounded up to the nanosecond. A frame occupies the queue (and counts in its depth) until
 * its last bit is sent.
 * <p>
 * ECN: an ECN-capable frame that finds more than the threshold queued ahead of it is marked CE as it
 * joins the queue (see {@link FrameInspector#markCongestionExperienced}). Random loss strikes frames as
 * they finish serialising (they used the wire, then vanished), drawing from the link's own seeded
 * {@link SplittableRandom} only while the probability is above zero.
 * <p>
 * Faults, set on the fabric's thread (directly, or scheduled by {@link Fabric#at}): {@link #down} is a
 * link failure switches see (ECMP stops choosing the link), {@link #blackhole} a silent one they do
 * not; both drop the frames offered and those still queued, and neither recalls frames already on the
 * wire. Loss probability, ECN threshold and propagation delay may also change mid-run.
 * <p>
 * Counters are plain fields written by the fabric's thread: read them there (in real time, through
 * {@link RealTimeFabricAgent#submit}), or after it stopped. A {@link LinkTap} sees each frame sent or
 * dropped, e.g. for a packet capture.
 */
public final class Link implements EventTarget
{
    private static final int DEPARTURE = 0;
    private static final int ARRIVAL = 1;

    private final int id;
    private final String name;
    private final int plane;
    private final Simulator simulator;
    private final FramePool pool;
    private final int targetId;
    private final int queueCapacityBytes;
    private final LinkConfig config;
    private final SplittableRandom random;
    private long propagationDelayNs;
    private int ecnThresholdBytes;
    private double lossProbability;
    private boolean down;
    private boolean blackholed;

    private FrameSink sink;
    private int sinkPort;
    private LinkTap tap;

    private int head = FramePool.NONE;
    private int tail = FramePool.NONE;
    private int queueBytes;
    private int queueFrames;
    private boolean transmitting;
    private long busyUntilPicos;

    private long framesSent;
    private long bytesSent;
    private long framesDelivered;
    private long tailDrops;
    private long randomLossDrops;
    private long blackholeDrops;
    private long linkDownDrops;
    private long ecnMarked;
    private int peakQueueBytes;

    /**
     * @param id        the link's index in its fabric.
     * @param name      for humans, e.g. {@code p0/leaf1->spine0}.
     * @param plane     the plane it belongs to.
     * @param config    rate, delay, queue, loss.
     * @param simulator the event loop it schedules on.
     * @param pool      where its frames live.
     * @param lossSeed  the seed of its random loss.
     */
    public Link(
        final int id,
        final String name,
        final int plane,
        final LinkConfig config,
        final Simulator simulator,
        final FramePool pool,
        final long lossSeed)
    {
        this.id = id;
        this.name = name;
        this.plane = plane;
        this.config = config;
        this.simulator = simulator;
        this.pool = pool;
        this.propagationDelayNs = config.propagationDelayNs();
        this.queueCapacityBytes = config.queueBytes();
        this.ecnThresholdBytes = config.ecnThresholdBytes();
        this.lossProbability = config.lossProbability();
        this.random = new SplittableRandom(lossSeed);
        this.targetId = simulator.register(this);
    }

    /**
     * Connects the far end. Control path, once.
     */
    public void connect(final FrameSink sink, final int sinkPort)
    {
        if (null != this.sink)
        {
            throw new IllegalStateException(name + " is already connected");
        }
        this.sink = sink;
        this.sinkPort = sinkPort;
    }

    /**
     * Offers a frame to the link's queue at {@code nowNs}; the link takes the slot (queues it or frees it).
     *
     * @return true if queued, false if dropped.
     */
    public boolean offer(final long nowNs, final int slot)
    {
        final int length = pool.length(slot);
        if (down)
        {
            linkDownDrops++;
            drop(nowNs, DropReason.LINK_DOWN, slot);
            return false;
        }
        if (blackholed)
        {
            blackholeDrops++;
            drop(nowNs, DropReason.BLACKHOLE, slot);
            return false;
        }
        if (queueBytes + length > queueCapacityBytes)
        {
            tailDrops++;
            drop(nowNs, DropReason.TAIL_DROP, slot);
            return false;
        }
        if (queueBytes > ecnThresholdBytes &&
            FrameInspector.markCongestionExperienced(pool.memory(), pool.offset(slot), length))
        {
            ecnMarked++;
        }
        pool.next(slot, FramePool.NONE);
        if (tail == FramePool.NONE)
        {
            head = slot;
        }
        else
        {
            pool.next(tail, slot);
        }
        tail = slot;
        queueBytes += length;
        queueFrames++;
        if (queueBytes > peakQueueBytes)
        {
            peakQueueBytes = queueBytes;
        }
        if (!transmitting)
        {
            startSerialising(Math.max(nowNs * 1000L, busyUntilPicos));
        }
        return true;
    }

    private void startSerialising(final long startPicos)
    {
        transmitting = true;
        busyUntilPicos = startPicos + config.serializationPicos(pool.length(head));
        simulator.schedule(Math.ceilDiv(busyUntilPicos, 1000L), targetId, DEPARTURE, head);
    }

    public void onEvent(final long nowNs, final int kind, final long arg)
    {
        if (kind == DEPARTURE)
        {
            onDeparture(nowNs);
        }
        else
        {
            framesDelivered++;
            sink.onFrameArrival(nowNs, sinkPort, (int)arg);
        }
    }

    private void onDeparture(final long nowNs)
    {
        final int slot = head;
        final int length = pool.length(slot);
        head = pool.next(slot);
        if (head == FramePool.NONE)
        {
            tail = FramePool.NONE;
        }
        queueBytes -= length;
        queueFrames--;

        if (down)
        {
            linkDownDrops++;
            drop(nowNs, DropReason.LINK_DOWN, slot);
        }
        else if (blackholed)
        {
            blackholeDrops++;
            drop(nowNs, DropReason.BLACKHOLE, slot);
        }
        else if (lossProbability > 0.0 && random.nextDouble() < lossProbability)
        {
            randomLossDrops++;
            drop(nowNs, DropReason.RANDOM_LOSS, slot);
        }
        else
        {
            framesSent++;
            bytesSent += length;
            if (null != tap)
            {
                tap.onFrameSent(nowNs, this, pool.memory(), pool.offset(slot), length);
            }
            simulator.schedule(nowNs + propagationDelayNs, targetId, ARRIVAL, slot);
        }

        if (head == FramePool.NONE)
        {
            transmitting = false;
        }
        else
        {
            // the next frame starts when the last bit of this one left, not at the rounded-up event time
            startSerialising(busyUntilPicos);
        }
    }

    private void drop(final long nowNs, final DropReason reason, final int slot)
    {
        if (null != tap)
        {
            tap.onFrameDropped(nowNs, this, reason, pool.memory(), pool.offset(slot), pool.length(slot));
        }
        pool.free(slot);
    }

    /**
     * Sets (or with null, removes) the tap that sees every frame this link sends or drops.
     */
    public void tap(final LinkTap newTap)
    {
        tap = newTap;
    }

    /**
     * Takes the link down (a failure switches detect: ECMP routes around it) or brings it back up.
     */
    public void down(final boolean isDown)
    {
        down = isDown;
    }

    /**
     * @return true while the link is up (it may still be blackholed).
     */
    public boolean isUp()
    {
        return !down;
    }

    /**
     * Starts or ends a blackhole: a failure nothing detects; the link stays up and drops everything.
     */
    public void blackhole(final boolean isBlackholed)
    {
        blackholed = isBlackholed;
    }

    /**
     * @return true while blackholed.
     */
    public boolean isBlackholed()
    {
        return blackholed;
    }

    /**
     * Changes the random loss probability, from now on.
     */
    public void lossProbability(final double probability)
    {
        if (!(probability >= 0.0 && probability < 1.0))
        {
            throw new IllegalArgumentException("loss probability " + probability + " must be in [0, 1)");
        }
        lossProbability = probability;
    }

    /**
     * @return the random loss probability now.
     */
    public double lossProbability()
    {
        return lossProbability;
    }

    /**
     * Changes the propagation delay, from now on: to make one path longer than its parallel siblings, so
     * that frames sprayed over them arrive out of order. Frames already on the wire keep their arrival
     * time, so shortening the delay lets later frames overtake them on this link too.
     */
    public void propagationDelayNs(final long nanoseconds)
    {
        if (nanoseconds < 0)
        {
            throw new IllegalArgumentException("propagation delay " + nanoseconds + " ns must not be negative");
        }
        propagationDelayNs = nanoseconds;
    }

    /** @return the propagation delay now. */
    public long propagationDelayNs()
    {
        return propagationDelayNs;
    }

    /**
     * Changes the ECN marking threshold, from now on.
     */
    public void ecnThresholdBytes(final int bytes)
    {
        if (bytes < 0)
        {
            throw new IllegalArgumentException("ECN threshold " + bytes + " B must not be negative");
        }
        ecnThresholdBytes = bytes;
    }

    /** @return the ECN marking threshold now. */
    public int ecnThresholdBytes()
    {
        return ecnThresholdBytes;
    }

    /** @return the link's index in its fabric. */
    public int id()
    {
        return id;
    }

    /** @return the link's name. */
    public String name()
    {
        return name;
    }

    /** @return the plane the link belongs to. */
    public int plane()
    {
        return plane;
    }

    /** @return the configuration it was built with (loss and ECN threshold may have changed since). */
    public LinkConfig config()
    {
        return config;
    }

    /** @return bytes queued now, the frame being serialised included. */
    public int queueBytes()
    {
        return queueBytes;
    }

    /** @return the queue's capacity in bytes. */
    public int queueCapacityBytes()
    {
        return queueCapacityBytes;
    }

    /**
     * @return true if a frame of {@code length} bytes offered now would fit the queue.
     */
    public boolean hasRoomFor(final int length)
    {
        return queueBytes + length <= queueCapacityBytes;
    }

    /** @return frames queued now, the frame being serialised included. */
    public int queueFrames()
    {
        return queueFrames;
    }

    /** @return the most bytes ever queued (since the last {@link #resetPeakQueueBytes}). */
    public int peakQueueBytes()
    {
        return peakQueueBytes;
    }

    /** Restarts the peak queue depth from the current depth. */
    public void resetPeakQueueBytes()
    {
        peakQueueBytes = queueBytes;
    }

    /** @return frames put on the wire (not lost, blackholed or dropped on a down link). */
    public long framesSent()
    {
        return framesSent;
    }

    /** @return bytes of the frames put on the wire, without the wire overhead. */
    public long bytesSent()
    {
        return bytesSent;
    }

    /** @return frames that reached the far end (sent minus those still propagating). */
    public long framesDelivered()
    {
        return framesDelivered;
    }

    /** @return frames dropped because the queue was full. */
    public long tailDrops()
    {
        return tailDrops;
    }

    /** @return frames lost at random. */
    public long randomLossDrops()
    {
        return randomLossDrops;
    }

    /** @return frames dropped by a blackhole. */
    public long blackholeDrops()
    {
        return blackholeDrops;
    }

    /** @return frames dropped because the link was down. */
    public long linkDownDrops()
    {
        return linkDownDrops;
    }

    /** @return frames dropped for any reason. */
    public long drops()
    {
        return tailDrops + randomLossDrops + blackholeDrops + linkDownDrops;
    }

    /** @return frames marked Congestion Experienced. */
    public long ecnMarked()
    {
        return ecnMarked;
    }

    public String toString()
    {
        return "Link{" + name + ", sent=" + framesSent + ", tailDrops=" + tailDrops + ", lossDrops=" +
            randomLossDrops + ", blackholeDrops=" + blackholeDrops + ", downDrops=" + linkDownDrops + ", ecn=" +
            ecnMarked + ", queue=" + queueBytes + "/" + queueCapacityBytes + " B, peak=" + peakQueueBytes +
            (down ? ", DOWN" : "") + (blackholed ? ", BLACKHOLED" : "") + '}';
    }
}
