package io.spraynic.datapath.transport.spray;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.spec.NamedParameterSpec;
import java.security.spec.XECPrivateKeySpec;
import java.util.HexFormat;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** S12.2 key exchange and derivation, S12.9 cookies: reference vectors and the properties the handshake needs. */
@Timeout(20)
class HandshakeCryptoTest
{
    private static final HexFormat HEX = HexFormat.of();
    private final HandshakeCrypto crypto = new HandshakeCrypto(new SecureRandom());

    private static PrivateKey privateKey(final String hex) throws Exception
    {
        return KeyFactory.getInstance("X25519").generatePrivate(new XECPrivateKeySpec(NamedParameterSpec.X25519,
            HEX.parseHex(hex)));
    }

    @Test
    void shouldComputeTheRfc7748SharedSecretFromWireBytes() throws Exception
    {
        // RFC 7748 S6.1: both private keys, both public keys as wire bytes, the shared secret
        final PrivateKey alice = privateKey("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a");
        final PrivateKey bob = privateKey("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb");
        final byte[] alicePublic = HEX.parseHex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a");
        final byte[] bobPublic = HEX.parseHex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f");
        final byte[] shared = HEX.parseHex("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742");
        assertArrayEquals(shared, crypto.sharedSecret(alice, bobPublic));
        assertArrayEquals(shared, crypto.sharedSecret(bob, alicePublic));
        assertArrayEquals(alicePublic, HandshakeCrypto.littleEndian(HandshakeCrypto.fromLittleEndian(alicePublic)));
    }

    @Test
    void shouldRoundTripPublicKeysAndAgreeBothWays()
    {
        final HandshakeCrypto.Ephemeral a = crypto.newEphemeral();
        final HandshakeCrypto.Ephemeral b = crypto.newEphemeral();
        assertEquals(32, a.publicKey.length);
        assertEquals(HandshakeCrypto.fromLittleEndian(a.publicKey),
            HandshakeCrypto.fromLittleEndian(HandshakeCrypto.littleEndian(HandshakeCrypto.fromLittleEndian(a.publicKey))));
        final byte[] ab = crypto.sharedSecret(a.privateKey, b.publicKey);
        assertArrayEquals(ab, crypto.sharedSecret(b.privateKey, a.publicKey));
        final long[] i = crypto.deriveKeys(null, ab, a.publicKey, b.publicKey, 0x123, 0x456, 77);
        final long[] r = crypto.deriveKeys(null, crypto.sharedSecret(b.privateKey, a.publicKey), a.publicKey, b.publicKey,
            0x123, 0x456, 77);
        assertArrayEquals(i, r);
        assertNotEquals(i[0], i[2], "one key per direction");
        final byte[] psk = new byte[32];
        psk[0] = 1;
        assertFalse(java.util.Arrays.equals(i, crypto.deriveKeys(psk, ab, a.publicKey, b.publicKey, 0x123, 0x456, 77)),
            "the PSK salts the keys");
        assertFalse(java.util.Arrays.equals(i, crypto.deriveKeys(null, ab, a.publicKey, b.publicKey, 0x123, 0x457, 77)),
            "the CIDs are bound");
        assertFalse(java.util.Arrays.equals(i, crypto.deriveKeys(null, ab, a.publicKey, b.publicKey, 0x123, 0x456, 78)),
            "the token is bound");
    }

    @Test
    void shouldRefuseLowOrderPublicKeys()
    {
        final HandshakeCrypto.Ephemeral a = crypto.newEphemeral();
        assertNull(crypto.sharedSecret(a.privateKey, new byte[32]), "u = 0");
        final byte[] one = new byte[32];
        one[0] = 1;
        assertNull(crypto.sharedSecret(a.privateKey, one), "u = 1");
    }

    @Test
    void shouldIssueCookiesThatVerifyOnlyForTheirInputsAndEpochs()
    {
        final CookieJar jar = new CookieJar(crypto, 1_000);
        final byte[] key = new byte[32];
        key[3] = 9;
        final byte[] cookie = jar.issue(5_500, 0, CookieJar.mappedLow(0x0A000001), 0x42, 7, key);
        assertTrue(jar.verify(cookie, 5_999, 0, CookieJar.mappedLow(0x0A000001), 0x42, 7, key));
        assertTrue(jar.verify(cookie, 6_999, 0, CookieJar.mappedLow(0x0A000001), 0x42, 7, key), "the next epoch");
        assertFalse(jar.verify(cookie, 7_000, 0, CookieJar.mappedLow(0x0A000001), 0x42, 7, key), "expired");
        assertFalse(jar.verify(cookie, 4_999, 0, CookieJar.mappedLow(0x0A000001), 0x42, 7, key), "from the future");
        assertFalse(jar.verify(cookie, 5_999, 0, CookieJar.mappedLow(0x0A000002), 0x42, 7, key), "another source");
        assertFalse(jar.verify(cookie, 5_999, 0, CookieJar.mappedLow(0x0A000001), 0x43, 7, key), "another CID");
        assertFalse(jar.verify(cookie, 5_999, 0, CookieJar.mappedLow(0x0A000001), 0x42, 8, key), "another token");
        key[0] = 1;
        assertFalse(jar.verify(cookie, 5_999, 0, CookieJar.mappedLow(0x0A000001), 0x42, 7, key), "another key");
        key[0] = 0;
        final CookieJar other = new CookieJar(crypto, 1_000);
        assertFalse(other.verify(cookie, 5_999, 0, CookieJar.mappedLow(0x0A000001), 0x42, 7, key), "another engine's secret");
    }
}
