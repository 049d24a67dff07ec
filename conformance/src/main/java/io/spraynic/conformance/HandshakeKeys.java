package io.spraynic.conformance;

import javax.crypto.KeyAgreement;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.interfaces.XECPublicKey;
import java.security.spec.NamedParameterSpec;
import java.security.spec.XECPublicKeySpec;

/**
 * One ephemeral X25519 key pair and the S12.2 derivation of a connection's two SipHash keys, written from the
 * document with the JDK's X25519 and HMAC-SHA256 (RFC 7748, RFC 5869).
 */
final class HandshakeKeys
{
    static final int PUBLIC_KEY_LENGTH = 32;
    private static final byte[] INFO = "spraynic v2 keys".getBytes(StandardCharsets.US_ASCII);

    final PrivateKey privateKey;
    /** The public key as RFC 7748's 32 bytes (the u-coordinate, little-endian). */
    final byte[] publicKey;

    private HandshakeKeys(final PrivateKey privateKey, final byte[] publicKey)
    {
        this.privateKey = privateKey;
        this.publicKey = publicKey;
    }

    static HandshakeKeys generate()
    {
        try
        {
            final KeyPair pair = KeyPairGenerator.getInstance("X25519").generateKeyPair();
            final BigInteger u = ((XECPublicKey)pair.getPublic()).getU();
            final byte[] le = new byte[PUBLIC_KEY_LENGTH];
            final byte[] be = u.toByteArray();
            for (int i = 0; i < PUBLIC_KEY_LENGTH && i < be.length; i++)
            {
                le[i] = be[be.length - 1 - i];
            }
            return new HandshakeKeys(pair.getPrivate(), le);
        }
        catch (final GeneralSecurityException e)
        {
            throw new IllegalStateException("this JDK lacks X25519", e);
        }
    }

    /** @return X25519(own, peer), or null when the peer's key is refused or the result is all zero. */
    byte[] shared(final byte[] peerPublic)
    {
        try
        {
            final byte[] be = new byte[PUBLIC_KEY_LENGTH + 1];
            for (int i = 0; i < PUBLIC_KEY_LENGTH; i++)
            {
                be[PUBLIC_KEY_LENGTH - i] = peerPublic[i];
            }
            final BigInteger u = new BigInteger(be).and(BigInteger.ONE.shiftLeft(255).subtract(BigInteger.ONE));
            final KeyAgreement agreement = KeyAgreement.getInstance("X25519");
            agreement.init(privateKey);
            agreement.doPhase(KeyFactory.getInstance("X25519").generatePublic(
                new XECPublicKeySpec(NamedParameterSpec.X25519, u)), true);
            final byte[] shared = agreement.generateSecret();
            int or = 0;
            for (final byte b : shared)
            {
                or |= b;
            }
            return or == 0 ? null : shared;
        }
        catch (final GeneralSecurityException | RuntimeException e)
        {
            return null;
        }
    }

    /**
     * S12.2: HKDF-SHA256 with the PSK as salt (32 zero bytes without one) of the shared secret, info = "spraynic v2 keys" || initiator
     * public || responder public || initiator CID || responder CID || token.
     *
     * @return {k_i2r, k_r2i}, each {k0, k1}.
     */
    static long[][] derive(final byte[] shared, final byte[] initiatorPublic, final byte[] responderPublic,
        final int initiatorCid, final int responderCid, final long token, final byte[] psk)
    {
        final byte[] prk = hmac(null == psk ? new byte[32] : psk, shared);
        final byte[] block = new byte[INFO.length + 2 * PUBLIC_KEY_LENGTH + 16 + 1];
        int at = 0;
        System.arraycopy(INFO, 0, block, at, INFO.length);
        at += INFO.length;
        System.arraycopy(initiatorPublic, 0, block, at, PUBLIC_KEY_LENGTH);
        at += PUBLIC_KEY_LENGTH;
        System.arraycopy(responderPublic, 0, block, at, PUBLIC_KEY_LENGTH);
        at += PUBLIC_KEY_LENGTH;
        at = bigEndian(block, at, initiatorCid, 4);
        at = bigEndian(block, at, responderCid, 4);
        at = bigEndian(block, at, token, 8);
        block[at] = 1;
        final byte[] okm = hmac(prk, block);
        return new long[][]{{le(okm, 0), le(okm, 8)}, {le(okm, 16), le(okm, 24)}};
    }

    static byte[] hmac(final byte[] key, final byte[] data)
    {
        try
        {
            final Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(data);
        }
        catch (final GeneralSecurityException e)
        {
            throw new IllegalStateException(e);
        }
    }

    private static int bigEndian(final byte[] into, final int at, final long value, final int n)
    {
        for (int i = 0; i < n; i++)
        {
            into[at + i] = (byte)(value >>> (8 * (n - 1 - i)));
        }
        return at + n;
    }

    private static long le(final byte[] b, final int at)
    {
        long v = 0;
        for (int i = 7; i >= 0; i--)
        {
            v = (v << 8) | (b[at + i] & 0xFF);
        }
        return v;
    }
}
