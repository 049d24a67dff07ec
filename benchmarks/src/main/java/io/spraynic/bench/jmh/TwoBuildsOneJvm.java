package io.spraynic.bench.jmh;

import java.io.File;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs one harness's {@code main} from two builds in one JVM, turn by turn (issue 13, RESULTS section 71): each build's
 * jars in a class loader of their own (the platform loader as parent, so that no class of either leaks into the
 * other), so both builds' code stays compiled between turns and each turn of one build runs beside a turn of the
 * other, at the same moment of the host's load. For harnesses whose whole engine differs between builds (a frozen
 * copy of main's engine would be thousands of lines), e.g. {@code SprayReceiveCpuTime}.
 * <pre>
 *   java -cp ... io.spraynic.bench.jmh.TwoBuildsOneJvm JARS_A JARS_B TURNS HARNESS [HARNESS ARGS...]
 * </pre>
 * JARS_A and JARS_B are folders of jars (a build's {@code cli/target/lib}); A's turn comes first in odd turns.
 */
public final class TwoBuildsOneJvm
{
    private TwoBuildsOneJvm()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        if (args.length < 4)
        {
            throw new IllegalArgumentException("JARS_A JARS_B TURNS HARNESS [ARGS...]");
        }
        final Method a = harness(args[0], args[3]);
        final Method b = harness(args[1], args[3]);
        final int turns = Integer.parseInt(args[2]);
        final String[] harnessArgs = java.util.Arrays.copyOfRange(args, 4, args.length);
        for (int turn = 1; turn <= turns; turn++)
        {
            final boolean aFirst = (turn & 1) == 1;
            run(aFirst ? "A" : "B", turn, aFirst ? a : b, harnessArgs);
            run(aFirst ? "B" : "A", turn, aFirst ? b : a, harnessArgs);
        }
    }

    private static void run(final String name, final int turn, final Method main, final String[] args) throws Exception
    {
        System.out.print(name + " turn " + turn + ": ");
        System.out.flush();
        main.invoke(null, (Object)args.clone());
    }

    private static Method harness(final String jars, final String className) throws Exception
    {
        final File[] files = new File(jars).listFiles((dir, name) -> name.endsWith(".jar"));
        if (null == files || files.length == 0)
        {
            throw new IllegalArgumentException("no jars in " + jars);
        }
        final List<URL> urls = new ArrayList<>();
        for (final File file : files)
        {
            urls.add(file.toURI().toURL());
        }
        final ClassLoader loader = new URLClassLoader(jars, urls.toArray(new URL[0]),
            ClassLoader.getPlatformClassLoader());
        return Class.forName(className, true, loader).getMethod("main", String[].class);
    }
}
