package io.spraynic.bench;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Finds the C baselines that {@code benchmarks/src/main/c/build.sh} builds beside the Java ones, linked
 * against the same shim.
 */
public final class NativeBinaries
{
    private NativeBinaries()
    {
    }

    /**
     * @param property a system property that names the binary; else it is looked for under
     *                 {@code spraynic.home} in {@code benchmarks/target/native}.
     * @param name     the binary's file name.
     * @param what     what it is, for the error message.
     * @return its path.
     * @throws IllegalStateException when it is not there (not built).
     */
    public static Path locate(final String property, final String name, final String what)
    {
        final String explicit = System.getProperty(property);
        final Path binary = null != explicit ? Path.of(explicit) :
            Path.of(System.getProperty("spraynic.home", "."), "benchmarks", "target", "native", name);
        if (!Files.isExecutable(binary))
        {
            throw new IllegalStateException(what + " " + binary + " is not built; run ./mvnw package (or pass -D" +
                property + "=PATH)");
        }
        return binary;
    }

    /**
     * @param baseline a binary or library that {@code build.sh} built into {@code benchmarks/target/native}.
     * @return the shim it was linked against (native-bindings' build output in the same tree), or null when
     * that is not there.
     */
    public static Path linkedShim(final Path baseline)
    {
        Path root = baseline.toAbsolutePath().normalize();
        for (int up = 0; up < 4 && null != root; up++) // native, target, benchmarks, the tree
        {
            root = root.getParent();
        }
        if (null == root)
        {
            return null;
        }
        final Path shim = root.resolve(Path.of("native-bindings", "target", "classes", "native", "linux-x86_64", "libspraynic_shim.so"));
        return Files.isReadable(shim) ? shim : null;
    }
}
