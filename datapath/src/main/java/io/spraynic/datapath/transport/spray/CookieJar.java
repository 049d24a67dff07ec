package io.spraynic.datapath.transport.spray;

/**
 * Stateless CONNECT cookies (docs/PROTOCOL.md S12.9): a responder answers a CONNECT without a valid cookie with
 * a {@code SPRAY_CONNECT_RETRY} carrying one and keeps nothing; only a CONNECT that echoes it, which proves the
 * initiator receives at its source address, can create state.
 * <p>
 * cookie = epoch (4 bytes, BE) || HMAC-SHA256(secret, epoch || source IP (16 bytes, IPv4 mapped to
 * ::ffff:a.b.c.d) || initiator CID (4, BE) || token (8, BE) || initiator public key (32))[0, 12).
 * The epoch is {@code now / epochNanos}; a cookie is valid in its epoch and the next one. The secret is random
 * per engine. Control path only.
 */
final class CookieJar
{
    static final int LENGTH = 16;
    private static final int MAC_LENGTH = LENGTH - 4;

    private final HandshakeCrypto crypto;
    private final byte[] secret = new byte[32];
    private final long epochNanos;
    private final byte[] input = new byte[4 + 16 + 4 + 8 + HandshakeCrypto.PUBLIC_KEY_LENGTH];

    /**
     * @param crypto     its HMAC and random source (the secret is drawn from it).
     * @param epochNanos length of an epoch: cookies live one to two of them.
     */
    CookieJar(final HandshakeCrypto crypto, final long epochNanos)
    {
        this.crypto = crypto;
        this.epochNanos = epochNanos;
        crypto.random().nextBytes(secret);
    }

    /**
     * @param sourceHigh the CONNECT's source IP, first 8 bytes (0x0000_0000_0000_0000 for IPv4).
     * @param sourceLow  its last 8 bytes (0x0000_FFFF_aabb_ccdd for IPv4 a.b.c.d).
     * @return a fresh cookie, 16 bytes.
     */
    byte[] issue(final long nowNanos, final long sourceHigh, final long sourceLow, final int initiatorCid, final long token,
        final byte[] initiatorPublic)
    {
        return make(epoch(nowNanos), sourceHigh, sourceLow, initiatorCid, token, initiatorPublic);
    }

    /** @return whether {@code cookie} was issued here for exactly these values, in this epoch or the last. */
    boolean verify(final byte[] cookie, final long nowNanos, final long sourceHigh, final long sourceLow,
        final int initiatorCid, final long token, final byte[] initiatorPublic)
    {
        final int epoch = ((cookie[0] & 0xFF) << 24) | ((cookie[1] & 0xFF) << 16) | ((cookie[2] & 0xFF) << 8) |
            (cookie[3] & 0xFF);
        final int now = epoch(nowNanos);
        if (epoch != now && epoch != now - 1)
        {
            return false;
        }
        final byte[] expected = make(epoch, sourceHigh, sourceLow, initiatorCid, token, initiatorPublic);
        return HandshakeCrypto.equalPrefix(expected, cookie, LENGTH);
    }

    private int epoch(final long nowNanos)
    {
        return (int)Math.floorDiv(nowNanos, epochNanos);
    }

    private byte[] make(final int epoch, final long sourceHigh, final long sourceLow, final int initiatorCid,
        final long token, final byte[] initiatorPublic)
    {
        int at = HandshakeCrypto.putInt(input, 0, epoch);
        at = HandshakeCrypto.putLong(input, at, sourceHigh);
        at = HandshakeCrypto.putLong(input, at, sourceLow);
        at = HandshakeCrypto.putInt(input, at, initiatorCid);
        at = HandshakeCrypto.putLong(input, at, token);
        System.arraycopy(initiatorPublic, 0, input, at, HandshakeCrypto.PUBLIC_KEY_LENGTH);
        final byte[] mac = crypto.hmac(secret, input);
        final byte[] cookie = new byte[LENGTH];
        HandshakeCrypto.putInt(cookie, 0, epoch);
        System.arraycopy(mac, 0, cookie, 4, MAC_LENGTH);
        return cookie;
    }

    /** @return the IPv4-mapped IPv6 form's low 8 bytes of {@code ipv4} (high 8 bytes are 0). */
    static long mappedLow(final int ipv4)
    {
        return 0x0000_FFFF_0000_0000L | (ipv4 & 0xFFFF_FFFFL);
    }
}
