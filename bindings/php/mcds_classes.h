/*
 * The handle classes of the mcds extension: the one list of them.
 *
 *   X(Class, stem, file)
 *
 *   Class  the PHP class Mcds\Class: register_class_Mcds_Class() in the
 *          generated mcds_arginfo.h (from its declaration in mcds.stub.php)
 *   stem   its class entry, php_mcds_<stem>_ce
 *   file   the C file with its methods, <file>.c (two classes may share one:
 *          TimeSeries and PackedSeries are both in timeseries.c)
 *
 * Read by php_mcds.h (the class entries' extern declarations), mcds.c (their
 * definitions, and in MINIT each class's registration and its
 * create_object, which makes it a php_mcds_object holding a libmcds
 * handle) and config.m4 (the sources PHP_NEW_EXTENSION builds: at
 * configure time, with sed over this file: keep each X(...) on a line of
 * its own). MINIT registers them in this order.
 *
 * Only the handle classes are here. Mcds\Decision and Mcds\Cursor (plain
 * objects with readonly properties, no handle) and the exception hierarchy
 * (each class registered with its parent) stay written out in mcds.c.
 *
 * A new PHP class: its methods (and its Mcds\Store factory) in a new
 * <file>.c, its declaration in mcds.stub.php, ./gen-arginfo.sh
 * (mcds_arginfo.h), one line here, and the new .c file in package.xml
 * (scripts/check-pecl.sh checks that list).
 */
#ifndef MCDS_CLASSES_H
#define MCDS_CLASSES_H

#define MCDS_HANDLE_CLASSES(X) \
	X(Store, store, store) \
	X(Counter, counter, counter) \
	X(Lock, lock, lock) \
	X(Set, set, set) \
	X(WindowCounter, window, window) \
	X(RateLimiter, limiter, limiter) \
	X(EventLog, log, eventlog) \
	X(Table, table, table) \
	X(HyperLogLog, hll, hll) \
	X(BloomFilter, bloom, bloom) \
	X(ActivityBitmap, bitmap, bitmap) \
	X(ShadowCounter, shadow_counter, shadow) \
	X(ViewCounter, view_counter, view) \
	X(ShardedSet, sharded_set, sharded_set) \
	X(IntArray, int_array, int_array) \
	X(TimeSeries, timeseries, timeseries) \
	X(PackedSeries, packed_series, timeseries) \
	X(Leaderboard, leaderboard, leaderboard) \
	X(ScalableBloomFilter, scalable_bloom, scalable_bloom) \
	X(CounterMap, counter_map, counter_map) \
	X(KeyValue, kv, kv)

#endif /* MCDS_CLASSES_H */
