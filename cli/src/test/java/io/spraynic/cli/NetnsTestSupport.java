package io.spraynic.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Commands for tests that build network namespaces: run one (failing loudly or quietly), clean up, await two NICs. */
final class NetnsTestSupport
{
    private NetnsTestSupport()
    {
    }

    /** @return its output; throws when it fails or takes over 30 s. */
    static String run(final String... command) throws IOException, InterruptedException
    {
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0)
        {
            throw new IllegalStateException(String.join(" ", command) + " failed: " + out);
        }
        return out;
    }

    /** Runs it, whatever comes of it (clean-up). */
    static void runQuietly(final String... command) throws IOException, InterruptedException
    {
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        p.waitFor(30, TimeUnit.SECONDS);
    }

    /** Joins two namespaces with a veth pair, both ends up. */
    static void vethPair(final String nsA, final String vethA, final String nsB, final String vethB)
        throws IOException, InterruptedException
    {
        run("ip", "link", "add", vethA, "netns", nsA, "type", "veth", "peer", "name", vethB, "netns", nsB);
        run("ip", "-n", nsA, "link", "set", vethA, "up");
        run("ip", "-n", nsB, "link", "set", vethB, "up");
    }

    /** Deletes the namespaces (with their links), ignoring those that are not there: a best-effort clean-up. */
    static void deleteNamespaces(final List<String> namespaces)
    {
        for (final String ns : namespaces)
        {
            try
            {
                runQuietly("ip", "netns", "del", ns);
            }
            catch (final Exception ignored)
            {
                // best effort: nothing to remove
            }
        }
    }

    /**
     * Waits for two {@code spraynic transfer} processes that exchange with each other (the client first, up to 180 s,
     * then the server, 30 s more) and checks that both ended with exit code 0.
     *
     * @return the client's output and the server's.
     */
    static List<String> awaitTransferPair(final Process client, final Path clientOutput, final Process server,
        final Path serverOutput) throws IOException, InterruptedException
    {
        final boolean clientDone = client.waitFor(180, TimeUnit.SECONDS);
        final boolean serverDone = server.waitFor(30, TimeUnit.SECONDS);
        final String clientOut = Files.readString(clientOutput);
        final String serverOut = Files.readString(serverOutput);
        assertTrue(clientDone && serverDone, "both ended in time; client: " + clientOut + " server: " + serverOut);
        assertEquals(0, client.exitValue(), clientOut + " SERVER: " + serverOut);
        assertEquals(0, server.exitValue(), serverOut);
        return List.of(clientOut, serverOut);
    }
}
