package io.spraynic.conformance;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.TreeMap;

/**
 * A deliberately small spray initiator for the self-test of the interoperability checks (S13.4), written in the
 * test module: it reads the suite's {@code nic.addr}, connects (the suite's own {@link ScriptedPeer} does the
 * handshake), WRITEs {@link #BYTES} on path 0 recovering what the suite drops (S6.5: what an ACK shows missing
 * goes again with its PSN and {@code RETRANSMIT}; a timer for a lost tail, S6.7; refused RNR, the WRITE goes again as
 * its next attempt once the attempt is acknowledged and the NACK's timer has passed, S9.3-4), then opens as many
 * two-packet WRITEs at once as the suite's window (S10.2-4), READs all back (the READ_REQUEST
 * sent again until answered), and CLOSEs. Each {@link Fault} makes it non-compliant in one way. It runs on its own
 * thread until done or closed.
 */
final class ToyInitiator implements AutoCloseable
{
    /** One way to break a clause the interoperability checks judge. */
    enum Fault
    {
        /** S6.6-1: a packet sent again on its path does not set RETRANSMIT. */
        NO_RETRANSMIT_FLAG,
        /** S6.5-1: nothing is sent again (the toy gives up after {@link #GIVE_UP_NANOS} and closes). */
        NO_RECOVERY,
        /** S12.4-2: every data packet's message tag is wrong. */
        WRONG_MESSAGE_TAG,
        /** S9.3-4: refused RNR, the WRITE goes again at once, before the NACK's timer and the attempt's ACKs. */
        RNR_RETRY_AT_ONCE,
        /** S10.2-5: a NACK RNR of reason NO_RESOURCES is ignored: the attempt is done once acknowledged. */
        IGNORE_NO_RESOURCES,
        /** S10.2-3: the CONNECT advertises no window and no READ limit (CONH window and reads 0). */
        NO_ADVERTISED_LIMITS,
        /** S10.2-4: one WRITE more than the suite's window open at once. */
        BEYOND_WINDOW
    }

    /** The most WRITEs the toy opens at once (S10.2-4), whatever window the suite advertises. */
    private static final int MAX_BURST = 16;

    static final int BYTES = 128 * 1024;
    private static final long TAIL_NANOS = 30 * ScriptedPeer.MILLI;
    private static final long GIVE_UP_NANOS = 3_000 * ScriptedPeer.MILLI;
    /** The first attempt and retries of the WRITE (S9.3). */
    private static final int MAX_ATTEMPTS = 4;

    private final InetSocketAddress self;
    private final InetSocketAddress suite;
    private final Path exchange;
    private final java.util.Set<Fault> faults;
    private final Thread thread;
    /** What went wrong at the toy's end (for the test's messages), or null. */
    volatile String failure;

    ToyInitiator(final InetSocketAddress self, final InetSocketAddress suite, final Path exchange,
        final java.util.Set<Fault> faults)
    {
        this.self = self;
        this.suite = suite;
        this.exchange = exchange;
        this.faults = faults;
        thread = new Thread(this::run, "toy-initiator");
        thread.setDaemon(true);
        thread.start();
    }

    private void run()
    {
        try
        {
            final long[] exposed = Target.readExchange(exchange, 30_000);
            try (UdpLink link = new UdpLink(self, suite))
            {
                final ConnectRequest request = new ConnectRequest();
                request.paths = 1;
                if (!faults.contains(Fault.NO_ADVERTISED_LIMITS))
                {
                    request.window = 16; // S10.2-3
                    request.reads = 4;
                }
                final ScriptedPeer c = new ScriptedPeer(link, request);
                final String refused = c.establish(8 * Checks.ANSWER_NANOS);
                if (null != refused)
                {
                    failure = "no connection: " + refused;
                    return;
                }
                final byte[] data = Checks.pattern(BYTES, 77);
                final boolean written = write(c, data, exposed[1], (int)exposed[2]);
                // S10.2-4: as many WRITEs open at once as the suite's window, one more by fault
                final int burst = Math.min(MAX_BURST, c.peerWindow) + (faults.contains(Fault.BEYOND_WINDOW) ? 1 : 0);
                if (written && burst(c, exposed[1], (int)exposed[2], burst))
                {
                    read(c, exposed[1], (int)exposed[2], BYTES + 2 * c.mtu * burst);
                }
                for (int attempt = 0; attempt < 8; attempt++)
                {
                    c.send(c.close(ConnectRequest.randomLong(), c.sendKey));
                    if (null != c.awaitPacket(100 * ScriptedPeer.MILLI, p -> p.opcode() == SprayWire.CLOSE_ACK))
                    {
                        return;
                    }
                }
            }
        }
        catch (final Exception e)
        {
            failure = e.toString();
        }
    }

    /** @return whether every packet of the WRITE was acknowledged in an attempt not refused. */
    private boolean write(final ScriptedPeer c, final byte[] data, final long address, final int rkey)
        throws IOException
    {
        final ScriptedPeer.Message m = new ScriptedPeer.Message(SprayWire.WRITE, 0, c.takeMsn(0), data.length, 0,
            address, rkey, 0);
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++)
        {
            final long[] retryAt = {-1}; // S9.3-4: set by an RNR NACK of this attempt
            if (!attempt(c, m, data, attempt, retryAt))
            {
                return false;
            }
            if (retryAt[0] < 0)
            {
                return true;
            }
            final long wait = retryAt[0] - System.nanoTime();
            if (wait > 0)
            {
                c.collect(wait);
            }
        }
        return false;
    }

    /** Sends attempt {@code attempt} of {@code m} and recovers it until acknowledged (or refused, at once, by fault). */
    private boolean attempt(final ScriptedPeer c, final ScriptedPeer.Message m, final byte[] data, final int attempt,
        final long[] retryAt) throws IOException
    {
        final int[] psns = new int[(data.length + c.mtu - 1) / c.mtu];
        final List<byte[]> packets = c.writePackets(m, data, null, psns, attempt);
        final TreeMap<Integer, byte[]> outstanding = new TreeMap<>(); // by distance from the first PSN
        for (int i = 0; i < packets.size(); i++)
        {
            final byte[] body = packets.get(i);
            if (faults.contains(Fault.WRONG_MESSAGE_TAG))
            {
                body[SprayWire.BTH_LENGTH + 20] ^= 1;
            }
            outstanding.put(i, body);
            c.send(body);
        }
        return recover(c, outstanding, psns[0], m, retryAt);
    }

    /**
     * S10.2-4: the first packets of {@code count} two-packet WRITEs after the {@link #BYTES} written, then, once
     * all are acknowledged, their second packets: all are open at once at the suite, whatever it drops.
     */
    private boolean burst(final ScriptedPeer c, final long address, final int rkey, final int count) throws IOException
    {
        final ScriptedPeer.Message[] messages = new ScriptedPeer.Message[count];
        for (int i = 0; i < count; i++)
        {
            messages[i] = new ScriptedPeer.Message(SprayWire.WRITE, 0, c.takeMsn(0), 2 * c.mtu, 0,
                address + BYTES + 2L * c.mtu * i, rkey, 0);
        }
        final byte[] payload = Checks.pattern(c.mtu, 78);
        for (int half = 0; half < 2; half++)
        {
            // every first packet acknowledged (recovered from the suite's drops) before any second one goes
            final TreeMap<Integer, byte[]> outstanding = new TreeMap<>();
            int first = -1;
            for (final ScriptedPeer.Message m : messages)
            {
                final int psn = c.takePsn(0);
                first = first < 0 ? psn : first;
                final byte[] body = c.dataPacket(m, 0, psn, half * c.mtu, payload, 0, true, c.tag(m));
                outstanding.put(outstanding.size(), body);
                c.send(body);
            }
            if (!recover(c, outstanding, first, null, new long[]{-1}))
            {
                return false;
            }
        }
        return true;
    }

    /**
     * Recovers {@code outstanding} (by distance from PSN {@code first} of path 0) until acknowledged; an RNR NACK of
     * {@code m} (null: none expected) sets {@code retryAt}.
     */
    private boolean recover(final ScriptedPeer c, final TreeMap<Integer, byte[]> outstanding, final int first,
        final ScriptedPeer.Message m, final long[] retryAt) throws IOException
    {
        // when each packet last went again: a gap is resent once per TAIL_NANOS, not on every ACK that shows it (under
        // 10 % loss every ACK showed the same gaps, and the toy's resends flooded its socket until it gave up)
        final java.util.Map<Integer, Long> resentAt = new java.util.HashMap<>();
        final long giveUp = System.nanoTime() + GIVE_UP_NANOS;
        while (!outstanding.isEmpty() && System.nanoTime() < giveUp)
        {
            final Packet ack = c.awaitPacket(TAIL_NANOS, p -> c.isAckOf(p, 0) || null != m && isRnrNack(c, p, m));
            if (null != ack && ack.opcode() == SprayWire.NACK)
            {
                if (faults.contains(Fault.IGNORE_NO_RESOURCES) && ack.h8(1) == SprayWire.RNR_REASON_NO_RESOURCES)
                {
                    continue;
                }
                if (retryAt[0] < 0)
                {
                    retryAt[0] = System.nanoTime() + ack.h32(8) * 1_000L; // S9.3-4: the NACK's rnrTimerMicros
                    if (faults.contains(Fault.RNR_RETRY_AT_ONCE))
                    {
                        retryAt[0] = 0;
                        return true;
                    }
                }
                continue;
            }
            if (faults.contains(Fault.NO_RECOVERY))
            {
                continue;
            }
            if (null == ack)
            {
                again(c, outstanding.firstEntry().getValue()); // S6.7: a lost tail, by a timer
                resentAt.put(outstanding.firstKey(), System.nanoTime());
                continue;
            }
            final int cumulative = SprayWire.psnDistance(first, ack.h24(5));
            outstanding.headMap(cumulative).clear();
            int highest = cumulative - 1;
            for (int i = 1; i < SprayWire.SACK_BITS; i++)
            {
                if (ScriptedPeer.sackBit(ack, i))
                {
                    outstanding.remove(cumulative + i);
                    highest = cumulative + i;
                }
            }
            final long now = System.nanoTime();
            for (final java.util.Map.Entry<Integer, byte[]> lost : outstanding.headMap(highest).entrySet())
            {
                final Long at = resentAt.get(lost.getKey());
                if (null == at || now - at > TAIL_NANOS)
                {
                    again(c, lost.getValue()); // S6.5: shown missing below what was acknowledged
                    resentAt.put(lost.getKey(), now);
                }
            }
        }
        return outstanding.isEmpty();
    }

    private static boolean isRnrNack(final ScriptedPeer c, final Packet p, final ScriptedPeer.Message m)
    {
        return p.icrcValid && p.opcode() == SprayWire.NACK && p.destQp() == c.localCid() && p.wholeHeaders() &&
            p.h8(0) == SprayWire.SYNDROME_RNR && p.h16(2) == m.stream() && p.h32(4) == m.msn() &&
            p.controlTagValid(c.receiveKey);
    }

    private void read(final ScriptedPeer c, final long address, final int rkey, final int bytes) throws IOException
    {
        final int msn = c.takeMsn(0);
        final byte[] request = c.readRequest(0, 0, msn, address, rkey, bytes);
        final ScriptedPeer.InboundRead read = c.inboundRead(0, msn);
        c.send(request);
        final long giveUp = System.nanoTime() + GIVE_UP_NANOS;
        while (!read.complete() && System.nanoTime() < giveUp)
        {
            if (null == c.awaitPacket(10 * TAIL_NANOS, p -> read.complete()) && read.bytesPlaced == 0)
            {
                again(c, request); // the request itself was lost
            }
        }
    }

    private void again(final ScriptedPeer c, final byte[] body) throws IOException
    {
        if (!faults.contains(Fault.NO_RETRANSMIT_FLAG))
        {
            body[SprayWire.BTH_LENGTH + 1] |= SprayWire.SETH_RETRANSMIT;
        }
        c.send(body);
    }

    @Override
    public void close() throws InterruptedException
    {
        thread.join(10_000);
    }
}
