package io.spraynic.datapath.transport.spray;

import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one object graph holds on the heap, part by part, without JOL: a reflective walk that follows the
 * references of this project's transport classes and Agrona's collections (not the engine, configuration, queues,
 * regions or anything shared), estimating each object's size as HotSpot lays it out on 64 bits with compressed
 * references and class pointers (12-byte header, fields packed, 8-byte alignment; arrays 16 bytes and their
 * elements). The estimate is checked against the heap measured over many connections by the tests that use it.
 */
final class Footprint
{
    private static final String[] FOLLOWED = {
        "io.spraynic.datapath.transport.spray.", "io.spraynic.datapath.transport.TransportCounters",
        "org.agrona.collections.",
    };
    private static final Class<?>[] SHARED = {
        SprayEngine.class, SprayConfig.class, SprayConnectionConfig.class, io.spraynic.datapath.transport.FrameSink.class,
        ConnectionStoragePool.Bucket.class, FairShareRateHint.class, // the engine's, reached through ControlPackets
        PathScheduler.Shared.class, RttEstimator.Limits.class, PathCongestionControl.Parameters.class, // the engine's
    };

    private final Map<Object, Boolean> seen = new IdentityHashMap<>();
    /** bytes by part: the field path from the root, array indices collapsed to [*]. */
    final Map<String, Long> bytesByPart = new TreeMap<>();
    long total;

    private Footprint()
    {
    }

    /** @return what {@code root} holds, by part. */
    static Footprint of(final Object root)
    {
        final Footprint footprint = new Footprint();
        if (root instanceof SprayConnection connection)
        {
            // the pool bucket's, shared by its idle connections
            final ConnectionStoragePool.Bucket bucket = connection.storageBucket();
            footprint.seen.put(bucket.idlePathSink, Boolean.TRUE);
            footprint.seen.put(bucket.idleWindow, Boolean.TRUE);
            footprint.seen.put(bucket.idleWindows, Boolean.TRUE);
            footprint.seen.put(bucket.idleTimeouts, Boolean.TRUE);
            footprint.seen.put(bucket.idleTimes, Boolean.TRUE);
            footprint.seen.put(bucket.idleTimes.lastProbeAt, Boolean.TRUE);
            footprint.seen.put(bucket.idleTimes.lastAckAt, Boolean.TRUE);
            footprint.seen.put(bucket.idleTimes.nextResyncAt, Boolean.TRUE);
            footprint.seen.put(bucket.idleTimes.answeredSentAt, Boolean.TRUE);
        }
        footprint.walk(root, "");
        return footprint;
    }

    private static boolean followed(final Class<?> type)
    {
        if (type.isArray())
        {
            final Class<?> component = type.getComponentType();
            return component.isPrimitive() || followed(component) || component == Object.class;
        }
        for (final Class<?> shared : SHARED)
        {
            if (shared.isAssignableFrom(type))
            {
                return false;
            }
        }
        final String name = type.getName();
        for (final String prefix : FOLLOWED)
        {
            if (name.startsWith(prefix))
            {
                return !type.isEnum();
            }
        }
        return false;
    }

    private void walk(final Object object, final String part)
    {
        if (null == object || !followed(object.getClass()) || null != seen.put(object, Boolean.TRUE))
        {
            return;
        }
        final Class<?> type = object.getClass();
        final long size = shallowSize(object);
        total += size;
        bytesByPart.merge(part.isEmpty() ? "(" + type.getSimpleName() + ")" : part, size, Long::sum);
        if (type.isArray())
        {
            if (!type.getComponentType().isPrimitive())
            {
                for (int i = 0, n = Array.getLength(object); i < n; i++)
                {
                    walk(Array.get(object, i), part + "[*]");
                }
            }
            return;
        }
        for (final Field field : fields(type))
        {
            if (field.getType().isPrimitive())
            {
                continue;
            }
            if (field.getName().equals("labels") || field.getName().equals("engineCounters") ||
                field.getName().equals("positions") || field.getName().equals("scratch"))
            {
                continue; // shared: a counter set's labels and positions, the engine's counters and path scratch
            }
            try
            {
                field.setAccessible(true);
                final Object value = field.get(object);
                final String name = field.getName().startsWith("arg$") ? "lambda" : field.getName();
                walk(value, part.isEmpty() ? name : part + "." + name);
            }
            catch (final ReflectiveOperationException | RuntimeException e)
            {
                // a field this walk cannot read is not counted
            }
        }
    }

    private static List<Field> fields(final Class<?> type)
    {
        final List<Field> fields = new ArrayList<>();
        for (Class<?> c = type; null != c && c != Object.class; c = c.getSuperclass())
        {
            for (final Field field : c.getDeclaredFields())
            {
                if (!Modifier.isStatic(field.getModifiers()))
                {
                    fields.add(field);
                }
            }
        }
        return fields;
    }

    private static long align(final long bytes)
    {
        return (bytes + 7) & ~7L;
    }

    private static int sizeOf(final Class<?> type)
    {
        if (type == long.class || type == double.class)
        {
            return 8;
        }
        if (type == int.class || type == float.class)
        {
            return 4;
        }
        if (type == short.class || type == char.class)
        {
            return 2;
        }
        if (type == byte.class || type == boolean.class)
        {
            return 1;
        }
        return 4; // a compressed reference
    }

    static long shallowSize(final Object object)
    {
        final Class<?> type = object.getClass();
        if (type.isArray())
        {
            return align(16L + (long)Array.getLength(object) * sizeOf(type.getComponentType()));
        }
        long bytes = 12;
        for (final Field field : fields(type))
        {
            bytes += sizeOf(field.getType());
        }
        return align(bytes);
    }

    /** @return the parts as "bytes  part" lines, largest first, and the total. */
    String table()
    {
        final StringBuilder sb = new StringBuilder();
        bytesByPart.entrySet().stream().sorted((x, y) -> Long.compare(y.getValue(), x.getValue()))
            .forEach(e -> sb.append(String.format("%10d  %s%n", e.getValue(), e.getKey())));
        return sb.append(String.format("%10d  total%n", total)).toString();
    }
}
