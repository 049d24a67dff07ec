package io.spraynic.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.spraynic.cli.LabPeers.format;

/**
 * How fast a spray sender gets off a link that fails silently (issue 14: recovery within 3 RTOs), from its own counters
 * file read every couple of milliseconds on a thread of its own ({@link Recorder}) around the failure.
 * <p>
 * A path crossing the link when it fails (its data or its ACKs) hears no ACK after it; at its RTO the sender counts its
 * outstanding packets lost and sends them again on the live paths (S7.4.1), and from then on the path takes no new data
 * until it answers. For each path that counts a loss after the failure, its first such loss is the resend. The copies
 * carry {@code RETRANSMIT} and the receiving NIC counts each it takes ({@code rx_retransmitted}, its counters file read
 * the same way): a path's copies are delivered at the receiver's first reading, not before its resend's, whose count
 * grew, since its reading before the failure, by as many as the silent paths had counted lost by that path's resend
 * (its own and those resent before it; copies arrive about in the order they were sent). A path's recovery runs from
 * the moment it went silent to its copies' delivery (before, a smoothed RTT of the slowest path was added to the resend as an
 * estimate). The count names no packet: a copy of a packet the failure did not catch (a spurious timeout's) counts
 * too, so with losses of another cause it can show the delivery early; the lab's blackhole test has none besides the
 * dead link. The failure lies somewhere
 * inside the lab command that made it (seconds on a loaded host), whose start bounds it; a path went silent with the
 * first packet its last ACK did not answer: about a round trip before that ACK while it was busy (the packet that ACK
 * answered crossed the link before it failed), or, when it sent nothing for a while after it (idle, not silent), with
 * the first packet it sent afterwards, within the reading before the one that shows it (a path moved to a port hashed
 * onto the dead link later, S7.7, goes silent so too). So it is taken as the later of the command's start and that.
 * A recovery is judged in the RTO the path's timer ran with (the counters' {@code rto_ns}, the late margin included
 * while its siblings answer too, read at the failure and in the reading before the resend, the larger unless a timeout
 * of the path came between: a path without an RTT sample of its own is timed by its siblings', S6.8, and an idle one
 * reads its initial RTT's until the siblings that start sending with it are sampled) and, stricter,
 * in that RTO without the connection's late margin (S6.8-3 leaves the margin out once a sibling shows the path
 * silent alone).
 */
final class PathRecovery
{
    /** Per path, in this order: the counters the analysis reads. */
    static final String[] PATH_FIELDS = {"acks_received", "lost", "timeouts", "tx_packets", "moved", "rto_ns",
        "srtt_ns"};
    static final int ACKS = 0;
    static final int LOST = 1;
    static final int TIMEOUTS = 2;
    static final int TX = 3;
    static final int MOVED = 4;
    static final int RTO = 5;
    static final int SRTT = 6;
    private static final Pattern LABEL = Pattern.compile("(conn 0x[0-9a-f]+): (?:path (\\d+) )?([a-z_]+)");

    /**
     * One reading: when, per path {@link #PATH_FIELDS}, the connection's late margin, and the copies of lost packets
     * it received ({@code rx_retransmitted}, its receiver's side).
     */
    record Sample(long nanos, long[][] paths, long lateMarginNanos, long rxRetransmitted)
    {
        Sample(final long nanos, final long[][] paths, final long lateMarginNanos)
        {
            this(nanos, paths, lateMarginNanos, 0);
        }

        long get(final int path, final int field)
        {
            return paths[path][field];
        }
    }

    /**
     * One cut path: when it went silent, the reading that showed its resend and the one before it (the resend came
     * between them), the RTO its timer ran with (and its reading at the failure) and its smoothed RTT at the failure,
     * in nanoseconds;
     * {@code recoveryNanos} to the copies' delivery, -1 when the receiver's readings did not show it; {@code lost} the
     * packets it had counted lost by its resend; {@code timeoutsByResend} its RTOs from the reading before the failure
     * to the one showing the resend (1: it resent at its first timeout, S7.4.1's relocation or the timeout's own
     * retransmission; more: a backoff came first, so an RTO passed with nothing lost); {@code readings} its counters
     * in the readings from its going silent to its resend (at most the last 16), for a reader to see what it did.
     */
    record Cut(int path, boolean atFailure, long lastAckNanos, long resentNanos, long resentAfterNanos,
        long failedNanos, long recoveryNanos,
        long rtoNanos, long rtoAtFailureNanos, long lateMarginNanos, long srttNanos, long sentAfter, long movedAfter,
        long lost, long timeoutsByResend, String readings)
    {
        double rtos()
        {
            return recoveryNanos / (double)rtoNanos;
        }

        /** In the RTO without the late margin (S6.8-3 leaves it out once a sibling shows the path silent alone). */
        double baseRtos()
        {
            return recoveryNanos / (double)Math.max(1, rtoNanos - lateMarginNanos);
        }
    }

    /**
     * @param cut            each path that lost packets after the failure: its first such loss, in path order.
     * @param meanInterval   mean time between samples, nanoseconds.
     * @param deliveredNanos when the receiver's readings first showed as many copies taken as the cut paths had lost
     *                       ({@link Cut#lost}, summed), from the failing command's start; -1: not seen.
     * @param copies         the copies the receiver took from its reading before the failure to its last.
     * @param receiverInterval the receiver's mean time between readings, nanoseconds (0: none).
     */
    record Result(List<Cut> cut, long meanInterval, long deliveredNanos, long copies, long receiverInterval)
    {
        /** @return the packets the cut paths had counted lost by their resends: the copies awaited. */
        long lost()
        {
            return cut.stream().mapToLong(Cut::lost).sum();
        }

        boolean delivered()
        {
            return deliveredNanos >= 0;
        }

        /** @return the most RTOs any path took from going silent to the copies' delivery; NaN if not seen. */
        double worstRtos()
        {
            return delivered() ? cut.stream().mapToDouble(Cut::rtos).max().orElse(Double.NaN) : Double.NaN;
        }

        double worstBaseRtos()
        {
            return delivered() ? cut.stream().mapToDouble(Cut::baseRtos).max().orElse(Double.NaN) : Double.NaN;
        }

        /**
         * @return the most RTOs any path took from going silent to its resend, as the sender's counters show it: to
         * the reading before the one that shows it, after which it came (not that reading less a mean interval: a
         * recorder descheduled on a loaded host reads late now and then, CI's load 2.77 run).
         */
        double worstResendRtos()
        {
            return cut.stream().mapToDouble(c -> Math.max(0, c.resentAfterNanos() - c.failedNanos()) /
                (double)c.rtoNanos()).max().orElse(Double.NaN);
        }

        double worstMillis()
        {
            return delivered() ? cut.stream().mapToLong(Cut::recoveryNanos).max().orElse(0) / 1e6 : Double.NaN;
        }

        @Override
        public String toString()
        {
            final StringBuilder text = new StringBuilder(format("%d path(s) went silent (%d at the failure, the others " +
                "later: rotated onto the dead link), resent within %.2f RTOs, %d packets lost by then; %s; sampled " +
                "every %.2f ms, the receiver every %.2f ms", cut.size(), cut.stream().filter(Cut::atFailure).count(),
                worstResendRtos(), lost(), delivered() ? format("the receiver had taken as many copies (RETRANSMIT) " +
                "%.1f ms after the command began: each path recovered, to its copies' delivery, within %.1f ms = %.2f " +
                "RTOs (%.2f without the late margin)", deliveredNanos / 1e6, worstMillis(), worstRtos(),
                worstBaseRtos()) : format("the receiver's readings did NOT show their delivery (%d copies taken " +
                "while read)", copies), meanInterval / 1e6, receiverInterval / 1e6));
            // the slowest few in detail (a connection has 64 paths)
            for (final Cut c : cut.stream().sorted((a, b) -> Double.compare(b.rtos(), a.rtos())).limit(4).toList())
            {
                text.append(format("; path %d%s: last ACK %+.1f ms, resent %+.1f to %+.1f ms after the command began " +
                    "(%d lost, %d timeout(s) of it by then), failure taken at %+.1f ms, recovery %.1f ms against RTO %.1f ms (%.1f at the failure; " +
                    "late margin %.1f, srtt %.1f): %.2f RTOs, then %d packets on it (payload-free probes at the resent " +
                    "PSNs among them) and %d moved off it (S7.4) in the next 3 RTOs", c.path(), c.atFailure() ? "" :
                    " (later)", c.lastAckNanos() / 1e6, c.resentAfterNanos() / 1e6, c.resentNanos() / 1e6, c.lost(),
                    c.timeoutsByResend(), c.failedNanos() / 1e6, c.recoveryNanos() / 1e6, c.rtoNanos() / 1e6, c.rtoAtFailureNanos() / 1e6,
                    c.lateMarginNanos() / 1e6, c.srttNanos() / 1e6, c.rtos(), c.sentAfter(), c.movedAfter()));
                if (c.resentAfterNanos() - c.failedNanos() > c.rtoNanos())
                {
                    text.append(" (its readings, ms from the command: new packets sent, ACKs, lost, timeouts, RTO: ")
                        .append(c.readings()).append(')');
                }
            }
            return text.toString();
        }
    }

    private PathRecovery()
    {
    }

    /**
     * @param samples      the sender's readings in time order, at least one before {@code failStart}.
     * @param receiver     the receiving NIC's readings in time order (its {@link Sample#rxRetransmitted}), at least one
     *                     before {@code failStart} for the delivery to be measured.
     * @param failStart    when the command that failed the link began (System.nanoTime).
     * @param failEnd      when it returned.
     * @return the cut paths' recoveries, times relative to {@code failStart}.
     */
    static Result analyse(final List<Sample> samples, final List<Sample> receiver, final long failStart,
        final long failEnd)
    {
        int before = -1;
        for (int i = 0; i < samples.size() && samples.get(i).nanos() <= failStart; i++)
        {
            before = i;
        }
        if (before < 0 || before + 1 >= samples.size())
        {
            throw new IllegalStateException("no readings on both sides of the failure (" + samples.size() + ")");
        }
        final Sample pre = samples.get(before);
        final int paths = pre.paths().length;
        final long interval = (samples.get(samples.size() - 1).nanos() - samples.get(0).nanos()) /
            Math.max(1, samples.size() - 1);
        final List<Cut> cut = new ArrayList<>();
        for (int p = 0; p < paths; p++)
        {
            int lossAt = -1;
            for (int i = before + 1; i < samples.size() && lossAt < 0; i++)
            {
                lossAt = samples.get(i).get(p, LOST) > pre.get(p, LOST) ? i : -1;
            }
            if (lossAt < 0)
            {
                continue;
            }
            int lastAck = before;
            for (int i = before + 1; i < lossAt; i++)
            {
                if (samples.get(i).get(p, ACKS) > samples.get(i - 1).get(p, ACKS))
                {
                    lastAck = i;
                }
            }
            final long lastAckNanos = samples.get(lastAck).nanos();
            final long srtt = samples.get(lastAck).get(p, SRTT);
            // a busy path went silent with the first packet its last ACK did not answer, about a round trip before
            // it; one that sent nothing for a while after it was idle, not silent, until its next packet (shown by a
            // reading, sent since the one before; tx_packets counts new data only, no probe or copy). A pause in a
            // busy path's sending is no idle spell (spraying, a path may send once in a few readings), so three
            // round trips are taken off a short one; a pause longer than the path's RTO is one: a packet its last
            // ACK left unanswered would have timed out in it and counted a loss, and it counted none
            long silentSince = lastAckNanos - srtt;
            // up to the reading showing the loss: an idle path's first packet may time out within one reading
            // (a fresh path's initial RTO is 6 ms), shown in the same reading as its loss
            for (int i = lastAck + 1; i <= lossAt; i++)
            {
                if (samples.get(i).get(p, TX) > samples.get(i - 1).get(p, TX))
                {
                    final long resumedAfter = samples.get(i - 1).nanos();
                    final boolean idle = resumedAfter - lastAckNanos >= samples.get(lastAck).get(p, RTO);
                    silentSince = Math.max(silentSince, idle ? resumedAfter : resumedAfter - 3 * srtt);
                    break;
                }
            }
            final long failed = Math.max(failStart, silentSince);
            // its RTO when it went silent (a path that was idle at the failure, as B's are while A writes, may have had
            // no sample of its own then)
            final int thenAt = Math.max(before, lastSampleAtOrBefore(samples, failed));
            final Sample then = samples.get(thenAt);
            // the RTO its timer ran with: the reading before the one showing the resend, if no timeout of the path
            // came between (a backoff); else the one at the failure. A path without an RTT sample of its own is timed
            // by its siblings' (S6.8): idle at the failure, as B's are on a fresh connection while A writes, its
            // reading then is its initial RTT's, until the siblings that start sending with it are sampled
            final Sample timing = samples.get(Math.max(thenAt, lossAt - 1));
            final long rto = timing.get(p, TIMEOUTS) == then.get(p, TIMEOUTS) ?
                Math.max(then.get(p, RTO), timing.get(p, RTO)) : then.get(p, RTO);
            final long resent = samples.get(lossAt).nanos();
            final long resentAfter = samples.get(lossAt - 1).nanos();
            final long[] after = sentAfter(samples, lossAt, p, resent + 3 * then.get(p, RTO));
            // ACKs already past the link when it failed still arrive, up to a round trip later (two: a loaded host's
            // round trips vary); a path answering longer went silent later (rotated onto the dead link)
            final boolean atFailure = lastAckNanos <= failEnd + 2 * srtt + 2 * interval;
            cut.add(new Cut(p, atFailure, lastAckNanos - failStart, resent - failStart, resentAfter - failStart,
                failed - failStart, -1, rto, then.get(p, RTO), then.lateMarginNanos(), srtt, after[0], after[1],
                samples.get(lossAt).get(p, LOST) - pre.get(p, LOST),
                samples.get(lossAt).get(p, TIMEOUTS) - pre.get(p, TIMEOUTS),
                readings(samples, pre, p, Math.max(Math.max(before, thenAt - 1), lossAt - 16), lossAt, failStart)));
        }
        // a path's copies are taken delivered once the receiver counted as many as the silent paths had lost by that
        // path's resend, its own and those resent before it (copies arrive about in the order they were sent: paths
        // rotated onto the dead link seconds later are not waited for); never before the reading before the one that
        // shows the resend
        final List<Cut> byResend = new ArrayList<>(cut);
        byResend.sort((a, b) -> Long.compare(a.resentNanos(), b.resentNanos()));
        final java.util.Map<Integer, Long> deliveredAt = new java.util.HashMap<>();
        long lostSoFar = 0;
        long[] delivery = {-1, 0, 0};
        for (int i = 0; i < byResend.size(); i++)
        {
            lostSoFar += byResend.get(i).lost();
            if (i + 1 < byResend.size() && byResend.get(i + 1).resentNanos() == byResend.get(i).resentNanos())
            {
                continue; // resent in the same reading: one count for all of them
            }
            delivery = delivery(receiver, failStart, byResend.get(i).resentAfterNanos() + failStart, lostSoFar);
            for (int j = i; j >= 0 && !deliveredAt.containsKey(byResend.get(j).path()); j--)
            {
                deliveredAt.put(byResend.get(j).path(), delivery[0]);
            }
        }
        final boolean all = delivery[0] >= 0;
        final List<Cut> timed = new ArrayList<>();
        for (final Cut c : cut)
        {
            final long at = deliveredAt.getOrDefault(c.path(), -1L);
            timed.add(!all || at < 0 ? c : new Cut(c.path(), c.atFailure(), c.lastAckNanos(), c.resentNanos(),
                c.resentAfterNanos(), c.failedNanos(), at - failStart - c.failedNanos(), c.rtoNanos(),
                c.rtoAtFailureNanos(), c.lateMarginNanos(), c.srttNanos(), c.sentAfter(), c.movedAfter(), c.lost(),
                c.timeoutsByResend(), c.readings()));
        }
        return new Result(timed, interval, all ? delivery[0] - failStart : -1, delivery[1], delivery[2]);
    }

    /** Path {@code p}'s counters in readings {@code from} to {@code to}, each since {@code pre}: a trace to read. */
    private static String readings(final List<Sample> samples, final Sample pre, final int p, final int from,
        final int to, final long failStart)
    {
        final StringBuilder text = new StringBuilder();
        for (int i = Math.max(0, from); i <= to; i++)
        {
            final Sample s = samples.get(i);
            text.append(i == Math.max(0, from) ? "" : ", ").append(format("%+.1f tx %d ack %d lost %d to %d rto %.1f",
                (s.nanos() - failStart) / 1e6, s.get(p, TX) - pre.get(p, TX), s.get(p, ACKS) - pre.get(p, ACKS),
                s.get(p, LOST) - pre.get(p, LOST), s.get(p, TIMEOUTS) - pre.get(p, TIMEOUTS), s.get(p, RTO) / 1e6));
        }
        return text.toString();
    }

    /**
     * @return {when (System.nanoTime) the receiver's first reading from {@code notBefore} on showed {@code lost} more
     * copies taken than its last reading before {@code failStart}, -1 if none did; the copies it took from then to its
     * last reading; its mean interval between readings}.
     */
    private static long[] delivery(final List<Sample> receiver, final long failStart, final long notBefore,
        final long lost)
    {
        int before = -1;
        for (int i = 0; i < receiver.size() && receiver.get(i).nanos() <= failStart; i++)
        {
            before = i;
        }
        if (before < 0)
        {
            return new long[] {-1, 0, 0};
        }
        final long base = receiver.get(before).rxRetransmitted();
        long at = -1;
        for (int i = before + 1; i < receiver.size() && at < 0; i++)
        {
            at = lost > 0 && receiver.get(i).nanos() >= notBefore && receiver.get(i).rxRetransmitted() - base >= lost ?
                receiver.get(i).nanos() : -1;
        }
        final Sample last = receiver.get(receiver.size() - 1);
        return new long[] {at, last.rxRetransmitted() - base,
            (last.nanos() - receiver.get(0).nanos()) / Math.max(1, receiver.size() - 1)};
    }

    private static int lastSampleAtOrBefore(final List<Sample> samples, final long nanos)
    {
        int at = 0;
        for (int i = 0; i < samples.size() && samples.get(i).nanos() <= nanos; i++)
        {
            at = i;
        }
        return at;
    }

    /** @return {packets sent, packets moved off it} path {@code p} sent from sample {@code from} to the last sample not after {@code until}. */
    private static long[] sentAfter(final List<Sample> samples, final int from, final int p, final long until)
    {
        int to = from;
        while (to + 1 < samples.size() && samples.get(to + 1).nanos() <= until)
        {
            to++;
        }
        return new long[] {samples.get(to).get(p, TX) - samples.get(from).get(p, TX),
            samples.get(to).get(p, MOVED) - samples.get(from).get(p, MOVED)};
    }

    /**
     * @return one reading of a counters file's values ({@link LabPeers.CountersSampler#current()}) for the connection
     * that sent the most packets, or null when it holds none with {@code paths} paths.
     */
    static Sample sample(final long nanos, final Map<String, Long> values, final int paths)
    {
        return sample(nanos, values, paths, activeConnection(Map.of(), values));
    }

    /**
     * @return the connection (its labels' prefix) whose {@code tx_packets} grew most from {@code before} to {@code
     * after} (from 0 if it is new), or, when none grew or there is no reading before, the one that sent the most; null
     * when {@code after} has none. The recorder keeps to
     * the one it chose: a fresh connection overtakes the warm-up's in packets sent mid-transfer, and readings of two
     * connections mixed made a path's count go backwards in a report.
     */
    static String activeConnection(final Map<String, Long> before, final Map<String, Long> after)
    {
        String connection = null;
        long mostGrowth = 0;
        long mostSent = -1;
        String busiest = null;
        for (final Map.Entry<String, Long> e : after.entrySet())
        {
            final Matcher m = LABEL.matcher(e.getKey());
            if (m.matches() && null == m.group(2) && m.group(3).equals("tx_packets"))
            {
                final long growth = before.isEmpty() ? 0 : e.getValue() - before.getOrDefault(e.getKey(), 0L);
                if (growth > mostGrowth)
                {
                    mostGrowth = growth;
                    connection = m.group(1);
                }
                if (e.getValue() > mostSent)
                {
                    mostSent = e.getValue();
                    busiest = m.group(1);
                }
            }
        }
        return null == connection ? busiest : connection;
    }

    /** @return one reading of {@code connection}'s counters, or null when it has no {@code paths} paths in it. */
    static Sample sample(final long nanos, final Map<String, Long> values, final int paths, final String connection)
    {
        if (null == connection)
        {
            return null;
        }
        final long[][] perPath = new long[paths][PATH_FIELDS.length];
        for (int p = 0; p < paths; p++)
        {
            for (int f = 0; f < PATH_FIELDS.length; f++)
            {
                final Long value = values.get(connection + ": path " + p + " " + PATH_FIELDS[f]);
                if (null == value)
                {
                    return null;
                }
                perPath[p][f] = value;
            }
        }
        return new Sample(nanos, perPath, values.getOrDefault(connection + ": late_margin_ns", 0L),
            values.getOrDefault(connection + ": rx_retransmitted", 0L));
    }

    /**
     * Reads a visitor's counters file every {@code periodMillis} on a thread of its own, for at most 60 s, keeping to
     * the connection whose packets grew most between its first two readings ({@link #activeConnection}).
     */
    static final class Recorder implements AutoCloseable
    {
        private final List<Sample> samples = new ArrayList<>();
        private final Thread thread;
        private volatile boolean running = true;
        /** What the last reading that gave no sample held, or how it failed: for a failure's message. */
        private volatile String unread = "";

        Recorder(final LabPeers.CountersSampler counters, final int paths, final int periodMillis)
        {
            final long deadline = System.nanoTime() + 60_000_000_000L;
            thread = new Thread(() ->
            {
                Map<String, Long> first = null;
                String connection = null;
                while (running && System.nanoTime() < deadline)
                {
                    final long now = System.nanoTime();
                    try
                    {
                        final Map<String, Long> values = counters.current();
                        if (null == first)
                        {
                            first = null == activeConnection(Map.of(), values) ? null : values;
                        }
                        else if (null == connection)
                        {
                            connection = activeConnection(first, values);
                        }
                        final Sample sample = sample(now, values, paths, connection);
                        if (null == sample)
                        {
                            unread = new java.util.TreeMap<>(values).keySet().toString();
                        }
                        else
                        {
                            synchronized (samples)
                            {
                                samples.add(sample);
                            }
                        }
                    }
                    catch (final RuntimeException e)
                    {
                        // the file went away between finding and reading it (the transfer ended): the next one
                        unread = e.toString();
                    }
                    try
                    {
                        Thread.sleep(periodMillis);
                    }
                    catch (final InterruptedException e)
                    {
                        return;
                    }
                }
            }, "path-recovery-recorder");
            thread.setDaemon(true);
            thread.start();
        }

        List<Sample> samples()
        {
            synchronized (samples)
            {
                return new ArrayList<>(samples);
            }
        }

        String unread()
        {
            return unread;
        }

        @Override
        public void close() throws InterruptedException
        {
            running = false;
            thread.join(5_000);
        }
    }
}
