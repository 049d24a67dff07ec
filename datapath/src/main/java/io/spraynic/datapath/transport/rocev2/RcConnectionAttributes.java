package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.transport.Psn;

import java.util.concurrent.TimeUnit;

/**
 * What {@code ibv_modify_qp} to RTR and RTS sets on an RC queue pair, with the path (addresses and UDP
 * source port: one path per QP, as RoCEv2 RC has).
 *
 * @param remoteQpNumber       the peer QP (24 bits).
 * @param remoteMac            the peer's MAC, low 48 bits.
 * @param remoteIpv4           the peer's IPv4 address.
 * @param udpSourcePort        this QP's flow entropy: every packet of the QP carries it, so ECMP keeps the
 *                             QP on one path.
 * @param pathMtu              payload bytes per packet, a {@link PathMtu}.
 * @param sendPsn              first PSN this QP sends (sq_psn).
 * @param receivePsn           first PSN this QP expects (rq_psn): the peer's send PSN.
 * @param ackTimeoutNanos      local ACK timeout before go-back-N retransmission (IB: 4.096 µs x 2^timeout).
 * @param retryCount           retransmissions without progress before RETRY_EXC_ERR (0-7).
 * @param rnrRetryCount        RNR NAK retries before RNR_RETRY_EXC_ERR (0-6; 7 retries forever).
 * @param minRnrTimer          the RNR timer code (0-31, IB table 45) this QP puts in its RNR NAKs.
 * @param ipVersion            4 (addresses {@link RcEngineConfig#localIpv4()} and {@code remoteIpv4}) or 6
 *                             (the four IPv6 halves below).
 * @param localIpv6High        first 8 bytes of this QP's IPv6 source address (its GID), when IPv6.
 * @param localIpv6Low         last 8 bytes of it.
 * @param remoteIpv6High       first 8 bytes of the peer's IPv6 address, when IPv6.
 * @param remoteIpv6Low        last 8 bytes of it.
 */
public record RcConnectionAttributes(
    int remoteQpNumber,
    long remoteMac,
    int remoteIpv4,
    int udpSourcePort,
    int pathMtu,
    int sendPsn,
    int receivePsn,
    long ackTimeoutNanos,
    int retryCount,
    int rnrRetryCount,
    int minRnrTimer,
    int ipVersion,
    long localIpv6High,
    long localIpv6Low,
    long remoteIpv6High,
    long remoteIpv6Low)
{
    /** An RNR retry count of 7 means retry forever. */
    public static final int RNR_RETRY_INFINITE = 7;

    public RcConnectionAttributes
    {
        PathMtu.validate(pathMtu);
        if ((remoteQpNumber & ~Psn.MASK) != 0 || (sendPsn & ~Psn.MASK) != 0 || (receivePsn & ~Psn.MASK) != 0)
        {
            throw new IllegalArgumentException("QP numbers and PSNs are 24 bits");
        }
        if (retryCount < 0 || retryCount > 7 || rnrRetryCount < 0 || rnrRetryCount > 7 || minRnrTimer < 0 ||
            minRnrTimer > 31 || ackTimeoutNanos <= 0 || udpSourcePort < 0 || udpSourcePort > 0xFFFF)
        {
            throw new IllegalArgumentException("retry counts 0-7, RNR timer 0-31, positive timeout, 16-bit port");
        }
        if (ipVersion != 4 && ipVersion != 6)
        {
            throw new IllegalArgumentException("IP version " + ipVersion);
        }
    }

    /**
     * @param exponent the IB local ACK timeout field (1-31).
     * @return 4.096 µs x 2^exponent in nanoseconds.
     */
    public static long ackTimeoutNanos(final int exponent)
    {
        if (exponent < 1 || exponent > 31)
        {
            throw new IllegalArgumentException("timeout exponent " + exponent + " must be 1-31");
        }
        return 4096L << exponent;
    }

    /**
     * @param remoteQpNumber peer QP.
     * @param remoteMac      peer MAC.
     * @param remoteIpv4     peer IPv4.
     * @param udpSourcePort  flow entropy.
     * @param pathMtu        MTU.
     * @param sendPsn        first PSN sent.
     * @param receivePsn     first PSN expected.
     * @return attributes with a 1 ms timeout, 7 retries, 7 (infinite) RNR retries and RNR timer 1 (10 µs).
     */
    public static RcConnectionAttributes of(
        final int remoteQpNumber,
        final long remoteMac,
        final int remoteIpv4,
        final int udpSourcePort,
        final int pathMtu,
        final int sendPsn,
        final int receivePsn)
    {
        return new RcConnectionAttributes(remoteQpNumber, remoteMac, remoteIpv4, udpSourcePort, pathMtu, sendPsn,
            receivePsn, TimeUnit.MILLISECONDS.toNanos(1), 7, RNR_RETRY_INFINITE, 1, 4, 0, 0, 0, 0);
    }

    /** @param nanos ACK timeout. @param retries retry count. @return a copy with them. */
    public RcConnectionAttributes withRetry(final long nanos, final int retries)
    {
        return new RcConnectionAttributes(remoteQpNumber, remoteMac, remoteIpv4, udpSourcePort, pathMtu, sendPsn,
            receivePsn, nanos, retries, rnrRetryCount, minRnrTimer, ipVersion, localIpv6High, localIpv6Low,
            remoteIpv6High, remoteIpv6Low);
    }

    /** @param retries RNR retry count. @param timer RNR timer code. @return a copy with them. */
    public RcConnectionAttributes withRnr(final int retries, final int timer)
    {
        return new RcConnectionAttributes(remoteQpNumber, remoteMac, remoteIpv4, udpSourcePort, pathMtu, sendPsn,
            receivePsn, ackTimeoutNanos, retryCount, retries, timer, ipVersion, localIpv6High, localIpv6Low,
            remoteIpv6High, remoteIpv6Low);
    }

    /**
     * @param localHigh  first 8 bytes of this QP's IPv6 address.
     * @param localLow   last 8 bytes of it.
     * @param remoteHigh first 8 bytes of the peer's IPv6 address.
     * @param remoteLow  last 8 bytes of it.
     * @return a copy whose packets go over IPv6 between these addresses.
     */
    public RcConnectionAttributes withIpv6(final long localHigh, final long localLow, final long remoteHigh,
        final long remoteLow)
    {
        return new RcConnectionAttributes(remoteQpNumber, remoteMac, remoteIpv4, udpSourcePort, pathMtu, sendPsn,
            receivePsn, ackTimeoutNanos, retryCount, rnrRetryCount, minRnrTimer, 6, localHigh, localLow, remoteHigh,
            remoteLow);
    }
}
