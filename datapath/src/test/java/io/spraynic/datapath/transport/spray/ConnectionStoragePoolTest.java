package io.spraynic.datapath.transport.spray;

import org.agrona.collections.Long2LongHashMap;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConnectionStoragePoolTest
{
    private static final ConnectionStorage.Shape SHAPE = new ConnectionStorage.Shape(2, 8, 4, 8, 4);

    @Test
    void shouldPrefillABucketAndLendItsSetsAgain()
    {
        final ConnectionStoragePool pool = new ConnectionStoragePool(2, 4);
        final ConnectionStoragePool.Bucket bucket = pool.bucket(SHAPE);
        assertSame(bucket, pool.bucket(new ConnectionStorage.Shape(2, 8, 4, 8, 4)), "one bucket per shape");
        assertEquals(2, bucket.created());
        final ConnectionStorage first = bucket.take();
        final ConnectionStorage second = bucket.take();
        assertNotSame(first, second);
        assertEquals(0, bucket.available());
        bucket.give(first);
        assertSame(first, bucket.take(), "a returned set is lent again, not a new one");
        assertEquals(2, bucket.created());
    }

    @Test
    void shouldGrowUpToTheLimitThenRefuseAndCount()
    {
        final ConnectionStoragePool pool = new ConnectionStoragePool(0, 2);
        final ConnectionStoragePool.Bucket bucket = pool.bucket(SHAPE);
        assertEquals(0, bucket.created());
        assertNotNull(bucket.take());
        assertNotNull(bucket.take());
        assertNull(bucket.take(), "at the limit the connection waits");
        assertNull(bucket.take());
        assertEquals(2, pool.exhausted());
        assertEquals(2, pool.created());
    }

    /**
     * The limit bounds the sets of every shape together, prewarmed ones included: a peer picks its connection's paths,
     * and with them the shape, so a limit per shape let eight peers' shapes hold eight times the sets allowed.
     */
    @Test
    void shouldBoundTheSetsOfEveryShapeTogether()
    {
        final ConnectionStoragePool pool = new ConnectionStoragePool(2, 5);
        final ConnectionStoragePool.Bucket[] shapes = new ConnectionStoragePool.Bucket[8];
        int lent = 0;
        for (int paths = 1; paths <= shapes.length; paths++)
        {
            shapes[paths - 1] = pool.bucket(new ConnectionStorage.Shape(paths, 8, 4, 8, 4));
            while (null != shapes[paths - 1].take())
            {
                lent++;
            }
        }
        assertEquals(5, lent, "five sets lent, over the shapes");
        assertEquals(5, pool.created(), "no more made, prewarmed ones counted");
        assertTrue(pool.exhausted() >= 8 - 2, "every shape past the first ones waits");
    }

    /**
     * Sets a shape holds unlent are dropped for another shape at the limit: else the prewarmed sets of a few shapes
     * no connection uses any more would keep every other shape waiting for good.
     */
    @Test
    void shouldGiveAnotherShapeTheRoomOfSetsLeftIdle()
    {
        final ConnectionStoragePool pool = new ConnectionStoragePool(4, 4);
        final ConnectionStoragePool.Bucket first = pool.bucket(SHAPE); // prewarmed: the whole limit, idle
        final ConnectionStoragePool.Bucket second = pool.bucket(new ConnectionStorage.Shape(1, 8, 4, 8, 4));
        assertEquals(4, first.created());
        assertEquals(0, second.created(), "nothing left to prewarm it with");
        final ConnectionStorage taken = second.take();
        assertNotNull(taken, "an idle set of the first shape made room");
        assertEquals(3, first.created());
        assertEquals(4, pool.created(), "still within the limit");
        for (int i = 0; i < 3; i++)
        {
            assertNotNull(second.take());
        }
        assertNull(second.take(), "every set lent: the limit holds");
        assertEquals(0, first.created());
    }

    @Test
    void shouldCountSetsLentNowAndAtPeakOverShapes()
    {
        final ConnectionStoragePool pool = new ConnectionStoragePool(1, 8);
        final ConnectionStoragePool.Bucket bucket = pool.bucket(SHAPE);
        final ConnectionStoragePool.Bucket other = pool.bucket(new ConnectionStorage.Shape(1, 8, 4, 8, 4));
        final ConnectionStorage first = bucket.take(); // pre-made
        final ConnectionStorage second = bucket.take(); // made on demand
        final ConnectionStorage third = bucket.take();
        assertEquals(3, pool.lent());
        assertEquals(3, pool.lentPeak());
        bucket.give(second);
        bucket.give(third);
        assertEquals(1, pool.lent());
        assertEquals(3, pool.lentPeak(), "the peak stays");
        final ConnectionStorage again = bucket.take(); // from the free list: lent 2, below the peak
        assertEquals(3, pool.lentPeak());
        final ConnectionStorage elsewhere = other.take();
        assertEquals(3, pool.lent());
        assertEquals(4, pool.lentPeak(), "peaks of each shape, added");
        bucket.give(first);
        bucket.give(again);
        other.give(elsewhere);
        assertEquals(0, pool.lent());
        assertEquals(4, pool.created());
    }

    @Test
    void shouldGiveBackAClearedSet()
    {
        final ConnectionStoragePool.Bucket bucket = new ConnectionStoragePool(1, 1).bucket(SHAPE);
        final ConnectionStorage storage = bucket.take();
        final SendSlots slots = new SendSlots(SHAPE.sendQueueDepth(), 1, 1024, storage.slots);
        final int slot = slots.take();
        slots.kind(slot, MessageKinds.WRITE);
        slots.msn(slot, 7);
        slots.appendToStream(slot);
        slots.forget(slot);
        slots.free(slot);
        assertEquals(1, slots.generation(slot));
        slots.detach();
        bucket.give(storage);
        final SendSlots view = new SendSlots(SHAPE.sendQueueDepth(), 1, 1024, storage.slots); // reads the records
        assertEquals(0, view.generation(slot), "cleared as new: generations, kinds, free-list order");
        assertEquals(0, view.kind(slot));
        view.detach();
        final SendSlots again = new SendSlots(SHAPE.sendQueueDepth(), 1, 1024, bucket.take().slots);
        assertEquals(slot, again.take(), "slots handed out in a new table's order");
    }

    @Test
    void shouldSizeASetByItsShape()
    {
        final ConnectionStorage storage = new ConnectionStorage(SHAPE);
        assertEquals(2, storage.windows.length);
        assertEquals(8, storage.slots.capacity);
        assertEquals(8, storage.inbound.capacity);
        assertEquals(4, storage.inbound.receiveCapacity);
        assertEquals(4, storage.marks.chunkCount);
        assertEquals(2 * PathSendWindow.CAPACITY, storage.resend.capacity);
    }

    @Test
    void shouldReportTheMapCapacityAgronaGives()
    {
        for (final int entries : new int[]{1, 4, 100, 4 * 1024, 4 * 1000})
        {
            assertEquals(new Long2LongHashMap(entries, 0.5f, -1).capacity(), ConnectionStorage.mapCapacity(entries));
        }
    }
}
