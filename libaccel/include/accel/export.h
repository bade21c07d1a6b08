/* export.h - symbol visibility for libaccel and its drivers. Everything not marked is hidden
 * (the libraries are built with -fvisibility=hidden). */
#ifndef ACCEL_EXPORT_H
#define ACCEL_EXPORT_H

#if defined(_WIN32)
#if defined(ACCEL_BUILDING_LIBRARY)
#define ACCEL_API __declspec(dllexport)
#else
#define ACCEL_API __declspec(dllimport)
#endif
#define ACCEL_DRIVER_EXPORT __declspec(dllexport)
#else
#if defined(ACCEL_BUILDING_LIBRARY)
#define ACCEL_API __attribute__((visibility("default")))
#else
#define ACCEL_API
#endif
#define ACCEL_DRIVER_EXPORT __attribute__((visibility("default")))
#endif

#endif /* ACCEL_EXPORT_H */
