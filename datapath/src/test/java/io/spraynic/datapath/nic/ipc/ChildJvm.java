package io.spraynic.datapath.nic.ipc;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A child JVM and its stdout lines, read on a thread of their own so a silent child cannot hang the test. */
final class ChildJvm implements AutoCloseable
{
    final Process process;
    final OutputStream in;
    final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

    ChildJvm(final Class<?> main, final List<String> args) throws Exception
    {
        final List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElseThrow());
        command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
            .filter(argument -> argument.startsWith("--")).toList());
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(args);
        process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        in = process.getOutputStream();
        final Thread reader = new Thread(() ->
        {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8)))
            {
                String line;
                while (null != (line = out.readLine()))
                {
                    lines.add(line);
                }
            }
            catch (final IOException ignored)
            {
                // the child went away: the test sees no more lines
            }
            lines.add("<exit>");
        }, "child-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    String next() throws InterruptedException
    {
        final String line = lines.poll(60, TimeUnit.SECONDS);
        assertNotNull(line, "the client process said nothing for 60 s");
        return line;
    }

    String expect(final String prefix) throws InterruptedException
    {
        final String line = next();
        assertTrue(line.startsWith(prefix), "expected " + prefix + ", the client process said: " + line);
        return line.substring(prefix.length()).trim();
    }

    void say(final String line) throws IOException
    {
        in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
    }

    public void close() throws Exception
    {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }
}
