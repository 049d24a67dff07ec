package io.spraynic.datapath.telemetry;

import org.agrona.concurrent.status.AtomicCounter;

import java.nio.file.Path;

/**
 * The other process of {@link CountersFileTest}: publishes a counter, waits for a line on stdin,
 * increments it, waits again, exits.
 */
public final class CountersFileWriterMain
{
    private CountersFileWriterMain()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        try (CountersFile file = CountersFile.create(Path.of(args[0]), "writer", 4))
        {
            final AtomicCounter frames = file.newCounter("writer: frames");
            frames.setRelease(42);
            System.out.println(file.path());
            System.out.flush();
            System.in.read();
            frames.incrementRelease();
            System.out.println("incremented");
            System.out.flush();
            System.in.read();
        }
    }
}
