package io.spraynic.datapath.transport.spray;

import javax.crypto.KeyAgreement;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.interfaces.XECPublicKey;
import java.security.spec.NamedParameterSpec;
import java.security.spec.XECPublicKeySpec;

/**
 * The cryptography of the spray handshake (docs/PROTOCOL.md S12.2): ephemeral X25519 key pairs (JCA), the
 * HKDF-SHA256 derivation of a connection's two SipHash keys, and HMAC-SHA256 for the pre-shared-key proof and
 * the stateless cookie. Control path only (allocates); one instance per engine, single-threaded.
 */
final class HandshakeCrypto
{
    /** Bytes of an X25519 public key (RFC 7748: the u-coordinate, little-endian). */
    static final int PUBLIC_KEY_LENGTH = 32;
    private static final byte[] INFO = "spraynic v2 keys".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ZERO_SALT = new byte[32];
    private static final BigInteger U_MASK = BigInteger.ONE.shiftLeft(255).subtract(BigInteger.ONE);

    /** Whether this JVM ran a handshake's cryptography once already (benign race: at worst it runs twice). */
    private static volatile boolean warm;

    private final SecureRandom random;
    private final KeyPairGenerator generator;
    private final KeyFactory keyFactory;
    private final Mac hmac;

    /** One side's ephemeral key pair: the private key and the public key's 32 wire bytes. */
    static final class Ephemeral
    {
        final PrivateKey privateKey;
        final byte[] publicKey;

        Ephemeral(final PrivateKey privateKey, final byte[] publicKey)
        {
            this.privateKey = privateKey;
            this.publicKey = publicKey;
        }
    }

    /** @param random where private keys come from. */
    HandshakeCrypto(final SecureRandom random)
    {
        this.random = random;
        try
        {
            generator = KeyPairGenerator.getInstance("X25519");
            generator.initialize(NamedParameterSpec.X25519, random);
            keyFactory = KeyFactory.getInstance("X25519");
            hmac = Mac.getInstance("HmacSHA256");
            if (!warm)
            {
                warmUp();
                warm = true;
            }
        }
        catch (final GeneralSecurityException e)
        {
            throw new IllegalStateException("this JDK lacks X25519 or HmacSHA256, which the spray handshake needs", e);
        }
    }

    /**
     * Runs each operation of a handshake once per JVM, on keys of its own, so that the first real handshake does not pay for
     * loading and initialising the JDK's providers: that costs several hundred milliseconds (0.7 s cold on this
     * project's loaded CI host, 1-6 ms warm), a good part of what an initiator waits for its first CONNECT's answer.
     */
    private void warmUp() throws GeneralSecurityException
    {
        // keys from a generator of its own: the engine's random (seeded in tests) gives the same keys as without this
        final KeyPairGenerator warmUpGenerator = KeyPairGenerator.getInstance("X25519");
        warmUpGenerator.initialize(NamedParameterSpec.X25519);
        final KeyPair own = warmUpGenerator.generateKeyPair();
        final byte[] ownPublic = littleEndian(((XECPublicKey)own.getPublic()).getU());
        final byte[] peerPublic = littleEndian(((XECPublicKey)warmUpGenerator.generateKeyPair().getPublic()).getU());
        final byte[] shared = sharedSecret(own.getPrivate(), peerPublic);
        if (null == shared)
        {
            throw new IllegalStateException("this JDK's X25519 gave no shared secret for two fresh key pairs");
        }
        deriveKeys(null, shared, ownPublic, peerPublic, 0, 0, 0L);
        hmac(shared, ownPublic);
    }

    /** @return a fresh ephemeral key pair. */
    Ephemeral newEphemeral()
    {
        final KeyPair pair = generator.generateKeyPair();
        return new Ephemeral(pair.getPrivate(), littleEndian(((XECPublicKey)pair.getPublic()).getU()));
    }

    /**
     * @return X25519(own private, peer public), 32 bytes; null when the peer's key is unusable or the result is
     * all zero (a low-order point, S12.2: BAD_KEY).
     */
    byte[] sharedSecret(final PrivateKey own, final byte[] peerPublic)
    {
        try
        {
            final PublicKey peer = keyFactory.generatePublic(new XECPublicKeySpec(NamedParameterSpec.X25519,
                fromLittleEndian(peerPublic)));
            final KeyAgreement agreement = KeyAgreement.getInstance("X25519");
            agreement.init(own);
            agreement.doPhase(peer, true);
            final byte[] shared = agreement.generateSecret();
            return isZero(shared) ? null : shared;
        }
        catch (final GeneralSecurityException | RuntimeException e)
        {
            return null; // the JDK refuses low-order points itself ("Point has small order")
        }
    }

    /**
     * S12.2: OKM = HKDF-SHA256(salt = psk or 32 zero bytes, IKM = shared, info = "spraynic v2 keys" ||
     * initiator public || responder public || initiator CID (4, BE) || responder CID (4, BE) || token (8, BE)),
     * 32 bytes: k_i2r = OKM[0, 16), k_r2i = OKM[16, 32), each read as two little-endian longs.
     *
     * @return {k_i2r0, k_i2r1, k_r2i0, k_r2i1}.
     */
    long[] deriveKeys(final byte[] psk, final byte[] shared, final byte[] initiatorPublic, final byte[] responderPublic,
        final int initiatorCid, final int responderCid, final long token)
    {
        final byte[] prk = hmac(null == psk ? ZERO_SALT : psk, shared);
        final byte[] info = new byte[INFO.length + 2 * PUBLIC_KEY_LENGTH + 16];
        int at = 0;
        System.arraycopy(INFO, 0, info, at, INFO.length);
        at += INFO.length;
        System.arraycopy(initiatorPublic, 0, info, at, PUBLIC_KEY_LENGTH);
        at += PUBLIC_KEY_LENGTH;
        System.arraycopy(responderPublic, 0, info, at, PUBLIC_KEY_LENGTH);
        at += PUBLIC_KEY_LENGTH;
        at = putInt(info, at, initiatorCid);
        at = putInt(info, at, responderCid);
        putLong(info, at, token);
        // HKDF-Expand for L = 32 <= HashLen: T(1) = HMAC(PRK, info || 0x01)
        final byte[] block = new byte[info.length + 1];
        System.arraycopy(info, 0, block, 0, info.length);
        block[info.length] = 1;
        final byte[] okm = hmac(prk, block);
        return new long[]{leLong(okm, 0), leLong(okm, 8), leLong(okm, 16), leLong(okm, 24)};
    }

    /** @return HMAC-SHA256(key, data[offset, offset + length)), 32 bytes. */
    byte[] hmac(final byte[] key, final byte[] data, final int offset, final int length)
    {
        try
        {
            hmac.init(new SecretKeySpec(key, "HmacSHA256"));
        }
        catch (final GeneralSecurityException e)
        {
            throw new IllegalStateException(e);
        }
        hmac.update(data, offset, length);
        return hmac.doFinal();
    }

    byte[] hmac(final byte[] key, final byte[] data)
    {
        return hmac(key, data, 0, data.length);
    }

    /** @return whether the first {@code length} bytes of a and b are equal, in time independent of their values. */
    static boolean equalPrefix(final byte[] a, final byte[] b, final int length)
    {
        return MessageDigest.isEqual(java.util.Arrays.copyOf(a, length), java.util.Arrays.copyOf(b, length));
    }

    SecureRandom random()
    {
        return random;
    }

    static byte[] littleEndian(final BigInteger u)
    {
        final byte[] be = u.toByteArray();
        final byte[] le = new byte[PUBLIC_KEY_LENGTH];
        for (int i = 0; i < PUBLIC_KEY_LENGTH && i < be.length; i++)
        {
            le[i] = be[be.length - 1 - i];
        }
        return le;
    }

    // RFC 7748 S5: the top bit of the last byte is ignored
    static BigInteger fromLittleEndian(final byte[] le)
    {
        final byte[] be = new byte[PUBLIC_KEY_LENGTH + 1];
        for (int i = 0; i < PUBLIC_KEY_LENGTH; i++)
        {
            be[PUBLIC_KEY_LENGTH - i] = le[i];
        }
        return new BigInteger(be).and(U_MASK);
    }

    static boolean isZero(final byte[] bytes)
    {
        int or = 0;
        for (final byte b : bytes)
        {
            or |= b;
        }
        return or == 0;
    }

    static int putInt(final byte[] into, final int at, final int value)
    {
        into[at] = (byte)(value >>> 24);
        into[at + 1] = (byte)(value >>> 16);
        into[at + 2] = (byte)(value >>> 8);
        into[at + 3] = (byte)value;
        return at + 4;
    }

    static int putLong(final byte[] into, final int at, final long value)
    {
        putInt(into, at, (int)(value >>> 32));
        return putInt(into, at + 4, (int)value);
    }

    static long leLong(final byte[] bytes, final int at)
    {
        long v = 0;
        for (int i = 7; i >= 0; i--)
        {
            v = (v << 8) | (bytes[at + i] & 0xFF);
        }
        return v;
    }
}
