package io.spraynic.cli;

import io.spraynic.datapath.transport.rocev2.RcConnectionAttributes;

import java.util.Locale;
import java.util.Map;

/**
 * The Linux lab's RoCEv2 local ACK timeout, set as an operator tunes it: from round trips measured to the serving NIC
 * before the queue pair connects ({@code deploy/lab/lab rtt}: ICMP echo from the NIC's router, which the NIC process
 * answers on its poll thread, so a process waiting for a core shows in it). The requester's timer is the one that
 * matters (a responder never times out), and a queue pair fails after 8 timeouts in a row without progress
 * (RETRY_EXC_ERR, the retry count being 7, its largest). The exponent is the smallest whose timeout is at least
 * {@value #TIMEOUT_PER_WORST_RTT} times the slowest reply seen, and never below {@value #FLOOR} (16.8 ms, the lab's
 * fixed exponent before: a quiet host keeps it and its figures stay comparable), so that 8 timeouts cover
 * {@code 8 x }{@value #TIMEOUT_PER_WORST_RTT} times the worst stall the measurement saw. A longer timeout costs
 * go-back-N only after a tail loss (a loss with nothing behind it to draw a NAK), which then waits that long.
 */
final class RoceAckTimeout
{
    /** 16.8 ms: the lab's fixed exponent up to RESULTS.md section 38. */
    static final int FLOOR = 12;
    /** 4.3 s: beyond it a tail loss stalls a queue pair longer than any measurement here tolerates. */
    static final int CEILING = 20;
    /** The timeout as a multiple of the slowest round trip measured. */
    static final int TIMEOUT_PER_WORST_RTT = 4;
    /** Echo requests per measurement, one every 10 ms: a second of the host's scheduling. */
    static final int ECHOES = 100;

    /**
     * An exponent and what it came from.
     *
     * @param exponent the IB local ACK timeout exponent (4.096 µs x 2^exponent).
     * @param derived  true when measured ({@link #fromRtt}), false when given.
     * @param received echo replies (of {@code sent}); the round trips are NaN when none or not measured.
     */
    record Choice(int exponent, boolean derived, int sent, int received, double medianMillis, double p99Millis,
        double maxMillis)
    {
        double timeoutMillis()
        {
            return RcConnectionAttributes.ackTimeoutNanos(exponent) / 1e6;
        }

        /** @return "14 (67.1 ms; from 100 echoes to the NIC: median 0.21, p99 3.9, max 12.0 ms)" or "14 (67.1 ms, given)". */
        String describe()
        {
            return derived ? String.format(Locale.ROOT, "%d (%.1f ms, %d x the slowest of %d echo replies of %d to " +
                "the serving NIC, at least %d: median %.2f, p99 %.2f, max %.2f ms)", exponent, timeoutMillis(),
                TIMEOUT_PER_WORST_RTT, received, sent, FLOOR, medianMillis, p99Millis, maxMillis) :
                String.format(Locale.ROOT, "%d (%.1f ms, given)", exponent, timeoutMillis());
        }

        /** @return the JSON fields of this choice, without braces. */
        String jsonFields()
        {
            return String.format(Locale.ROOT, "\"ackTimeoutExponent\":%d,\"ackTimeoutMillis\":%.3f," +
                "\"ackTimeoutDerived\":%b,\"echoSent\":%d,\"echoReceived\":%d,\"echoMedianMillis\":%s," +
                "\"echoP99Millis\":%s,\"echoMaxMillis\":%s", exponent, timeoutMillis(), derived, sent, received,
                number(medianMillis), number(p99Millis), number(maxMillis));
        }
    }

    private RoceAckTimeout()
    {
    }

    /** @return an exponent given by the operator, 1-31. */
    static Choice given(final int exponent)
    {
        RcConnectionAttributes.ackTimeoutNanos(exponent); // refuses one out of range
        return new Choice(exponent, false, 0, 0, Double.NaN, Double.NaN, Double.NaN);
    }

    /**
     * @param rtt {@code lab rtt --flat}'s lines as a map (sent, received, median_ms, p99_ms, max_ms).
     * @return the exponent for the round trips measured; throws if the NIC answered none (it answers echo for its
     * addresses: none means it is not there, and a guess would hide that).
     */
    static Choice fromRtt(final Map<String, String> rtt)
    {
        final int sent = Integer.parseInt(rtt.getOrDefault("sent", "0"));
        final int received = Integer.parseInt(rtt.getOrDefault("received", "0"));
        if (received == 0)
        {
            throw new IllegalStateException("the serving NIC answered none of " + sent + " echo requests from its " +
                "router: no round trip to set the RoCEv2 ACK timeout from " + rtt);
        }
        final double max = Double.parseDouble(rtt.get("max_ms"));
        return new Choice(exponentFor(max), true, sent, received, Double.parseDouble(rtt.get("median_ms")),
            Double.parseDouble(rtt.get("p99_ms")), max);
    }

    /** @return the smallest exponent in FLOOR..CEILING whose timeout is at least TIMEOUT_PER_WORST_RTT x worst. */
    static int exponentFor(final double worstRttMillis)
    {
        if (!(worstRttMillis >= 0))
        {
            throw new IllegalArgumentException("a round trip of " + worstRttMillis + " ms");
        }
        final double wantedNanos = TIMEOUT_PER_WORST_RTT * worstRttMillis * 1e6;
        int exponent = FLOOR;
        while (exponent < CEILING && RcConnectionAttributes.ackTimeoutNanos(exponent) < wantedNanos)
        {
            exponent++;
        }
        return exponent;
    }

    private static String number(final double value)
    {
        return Double.isNaN(value) ? "null" : String.format(Locale.ROOT, "%.3f", value);
    }
}
