// Package topicconfig is the registry of Apache Kafka 4.1's topic configs:
// for each its name, type, default, valid values, and the broker configs it
// falls back to (its synonyms: retention.ms <- log.retention.ms,
// log.retention.minutes, log.retention.hours). It validates values the way
// Kafka's ConfigDef does (Validate, ValidateAll, ValidateBroker), describes
// a topic's configs with values, sources and synonyms the way
// DescribeConfigs reports them (Describe), and turns them into the settings
// of a kzero/log.Log (LogConfig).
//
// # Resolution
//
// A topic config's value is the first of:
//
//  1. the topic's dynamic config (DYNAMIC_TOPIC_CONFIG), from the metadata
//     image;
//  2. a broker synonym set dynamically for this broker
//     (DYNAMIC_BROKER_CONFIG), then for the cluster (DYNAMIC_DEFAULT_BROKER_CONFIG),
//     then in server.properties (STATIC_BROKER_CONFIG), each layer trying the
//     synonyms in order, the value converted to the topic's unit;
//  3. the default (DEFAULT_CONFIG).
//
// Topic configs are never read-only or sensitive.
//
// Everything here is pure and safe for concurrent use: the registry is
// built at init and never changes.
package topicconfig
