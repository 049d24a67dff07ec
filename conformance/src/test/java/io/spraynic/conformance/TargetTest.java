package io.spraynic.conformance;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link Target#readExchange}: a target's {@code nic.addr} is another process's file, read as hostile: an rkey is a
 * u32 on the wire, so one that is signed or wider is refused rather than cut to another key, and a target that
 * deregistered its region says so.
 */
class TargetTest
{
    @TempDir
    Path dir;

    private long[] read(final String line) throws Exception
    {
        Files.writeString(dir.resolve("nic.addr"), line);
        return Target.readExchange(dir, 1_000);
    }

    @Test
    void shouldReadAnUnsignedRkeyUpToThirtyTwoBits() throws Exception
    {
        assertArrayEquals(new long[]{2, 4096, 4_294_967_295L, 65536},
            read("planes=2 ip.0=10.0.0.2 ip.1=10.0.1.2 addr=4096 rkey=4294967295 length=65536"));
        assertArrayEquals(new long[]{1, 4096, 7, 65536}, read("ip.0=10.0.0.2 addr=4096 rkey=7 length=65536"));
    }

    @Test
    void shouldRefuseAnRkeyOutsideThirtyTwoBitsANegativeLengthAndAMissingField()
    {
        for (final String line : new String[]{"addr=4096 rkey=-1 length=65536", "addr=4096 rkey=4294967296 length=1",
            "addr=4096 rkey=7 length=-1"})
        {
            final IllegalStateException refused = assertThrows(IllegalStateException.class, () -> read(line), line);
            assertTrue(refused.getMessage().contains("the rkey must be an unsigned 32-bit number"), refused.getMessage());
        }
        final IllegalStateException missing = assertThrows(IllegalStateException.class,
            () -> read("addr=4096 length=1"));
        assertTrue(missing.getMessage().contains("does not say addr, rkey and length"), missing.getMessage());
    }

    @Test
    void shouldSayATargetDeregisteredItsRegion()
    {
        final IllegalStateException refused = assertThrows(IllegalStateException.class,
            () -> read("planes=1 ip.0=10.0.0.2 deregistered=7"));
        assertTrue(refused.getMessage().contains("says the target deregistered its region"), refused.getMessage());
    }

    /**
     * A pipe planted at {@code nic.addr} held the suite's read for good, a link read whatever it named, and a huge
     * file was read whole: refused. Publishing the suite's own {@code nic.addr} never writes through a link planted at
     * its temporary name (its target stays as it was).
     */
    @Test
    void shouldReadOnlyASmallRegularFileAndPublishNeverThroughALink() throws Exception
    {
        final Path fifo = dir.resolve("nic.addr");
        org.junit.jupiter.api.Assertions.assertEquals(0,
            new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
        assertTrue(assertThrows(java.io.IOException.class, () -> Target.readExchange(dir, 1_000)).getMessage()
            .contains("is not a regular file"));
        Files.delete(fifo);
        Files.write(fifo, new byte[Target.MAX_EXCHANGE_BYTES + 1]);
        assertTrue(assertThrows(java.io.IOException.class, () -> Target.readExchange(dir, 1_000)).getMessage()
            .contains("holds more than"));
        Files.delete(fifo);
        final Path victim = Files.writeString(dir.resolve("victim"), "precious");
        Files.createSymbolicLink(dir.resolve("nic.addr.tmp"), victim);
        InitiatorChecks.publish(dir, new java.net.InetSocketAddress("127.0.0.1", 4791));
        org.junit.jupiter.api.Assertions.assertEquals("precious", Files.readString(victim), "not written through");
        assertTrue(Files.isRegularFile(dir.resolve("nic.addr"), java.nio.file.LinkOption.NOFOLLOW_LINKS));
        assertArrayEquals(new long[]{1, 1L << 32, 1, 1L << 30}, Target.readExchange(dir, 1_000));
        if ("root".equals(System.getProperty("user.name")))
        {
            // a stranger's nic.addr (in a sticky directory anyone may make the name first) names a region of its choice
            org.junit.jupiter.api.Assertions.assertEquals(0,
                new ProcessBuilder("chown", "65534", dir.resolve("nic.addr").toString()).start().waitFor());
            assertTrue(assertThrows(java.io.IOException.class, () -> Target.readExchange(dir, 1_000)).getMessage()
                .contains("belongs to uid 65534"));
        }
    }
}
