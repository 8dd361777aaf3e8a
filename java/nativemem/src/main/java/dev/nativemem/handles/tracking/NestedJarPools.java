package dev.nativemem.handles.tracking;

import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.lang.reflect.Field;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * The Inflater pools of Spring Boot's nested-jar loader ({@code NestedJarFileResources}, 3.2 to
 * 4.x), read from the pools themselves: how many Inflaters rest in them now. A stream the tracker
 * only counted (not sampled) cannot be followed into a pool by its events, but the pool's own cache
 * ({@code Deque<Inflater> inflaterCache}, ended and set to null when the pool is released) says
 * which of them are the pool's, at any level. Pools are known weakly, from their hooks.
 */
final class NestedJarPools {
  /** The pools seen, weakly, by identity. */
  private final Map<Object, Boolean> pools = new ConcurrentHashMap<>();

  private final ReferenceQueue<Object> collected = new ReferenceQueue<>();

  /** The {@code inflaterCache} field of a pool class, or null when it has none. */
  private static final ClassValue<Field> CACHE_FIELD =
      new ClassValue<Field>() {
        @Override
        protected Field computeValue(Class<?> type) {
          try {
            Field field = type.getDeclaredField("inflaterCache");
            if (!Collection.class.isAssignableFrom(field.getType())) {
              return null;
            }
            field.setAccessible(true);
            return field;
          } catch (NoSuchFieldException | RuntimeException e) {
            return null; // another loader's layout: its pooled streams stay counted as open
          }
        }
      };

  /** A pool's hook ran: remember the pool. */
  void seen(Object pool) {
    if (pool != null && !pools.containsKey(new Probe(pool))) {
      pools.put(new PoolRef(pool, collected), Boolean.TRUE);
    }
  }

  /**
   * Inflaters resting in the pools now that {@code counted} accepts (the tracker's: those without a
   * record of their own; recorded ones follow their pool events).
   */
  long resting(Predicate<Object> counted) {
    for (Object gone; (gone = collected.poll()) != null; ) {
      pools.remove(gone);
    }
    long resting = 0;
    for (Object key : pools.keySet()) {
      Object pool = ((PoolRef) key).get();
      Field field = pool == null ? null : CACHE_FIELD.get(pool.getClass());
      if (field != null) {
        resting += resting(pool, field, counted);
      }
    }
    return resting;
  }

  private static long resting(Object pool, Field field, Predicate<Object> counted) {
    try {
      Object cache = field.get(pool);
      if (cache == null) {
        return 0; // released: its Inflaters were ended
      }
      synchronized (cache) { // the pool's own lock on its cache
        if (field.get(pool) != cache) {
          return 0;
        }
        long n = 0;
        for (Object inflater : (Collection<?>) cache) {
          if (counted.test(inflater)) {
            n++;
          }
        }
        return n;
      }
    } catch (IllegalAccessException | RuntimeException e) {
      return 0;
    }
  }

  /** A pool, weakly, equal to another reference to the same pool or to a {@link Probe} of it. */
  private static final class PoolRef extends WeakReference<Object> {
    private final int hash;

    PoolRef(Object pool, ReferenceQueue<Object> queue) {
      super(pool, queue);
      this.hash = System.identityHashCode(pool);
    }

    @Override
    public int hashCode() {
      return hash;
    }

    @Override
    public boolean equals(Object other) {
      if (this == other) {
        return true;
      }
      Object pool = get();
      return pool != null
          && (other instanceof Probe
              ? ((Probe) other).pool == pool
              : other instanceof PoolRef && ((PoolRef) other).get() == pool);
    }
  }

  /** Looks a live pool up without a reference object. */
  private static final class Probe {
    private final Object pool;

    Probe(Object pool) {
      this.pool = pool;
    }

    @Override
    public int hashCode() {
      return System.identityHashCode(pool);
    }

    @Override
    public boolean equals(Object other) {
      return other instanceof PoolRef && ((PoolRef) other).get() == pool;
    }
  }
}
