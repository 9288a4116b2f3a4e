// The app's side of the typed settings library (settings/settings.h), the one
// place the app's preferences live: loading the file with its warnings, saving
// it, and converting between its plain values and the app's (theme, base64 of
// Qt's window geometry and dock state, the last open conversation).
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <filesystem>

#include "app/theme.h"
#include "hearth/result.h"
#include "models/run_config.h"
#include "settings/settings.h"

namespace hearth::app {

struct AppSettings {
  std::filesystem::path path;  // the file; empty: nowhere to save (no config folder, or it could not be read)
  settings::Settings values;
  QStringList warnings;      // from loading: replaced values, a corrupt or unreadable file; each names the key or file
  bool first_start = false;  // no settings file yet: the app chooses for this machine (models/recommend.h)
};

// Loads `path`, or settings::default_settings_path() when empty. Never fails:
// any problem gives the defaults (or the value's default) and a warning. A file
// that exists but cannot be read leaves `path` empty, so it is never overwritten.
AppSettings load_app_settings(const QString& path);

// Atomic (the library writes a temporary file and renames it). kIo naming the
// file on failure; kNotFound when `path` is empty.
Result<void> save_app_settings(const AppSettings& settings);

// How the app runs a model, from the settings: device, context length and KV
// precision; the batch limits are the app's (one user chats, maybe with a
// regeneration running: four sequences, two full contexts of KV pool).
models::RunConfig run_config_of(const settings::Settings& settings);

Theme theme_of(const settings::Settings& settings);
void set_theme(settings::Settings& settings, Theme theme);

// The settings keep Qt's opaque blobs (saveGeometry / saveState) as base64 text.
QByteArray blob_from_base64(const std::string& text);
std::string blob_to_base64(const QByteArray& blob);

// The id of the conversation open at exit, kept under kLastConversationKey among
// the library's unknown keys (the library has no field for it); 0 when absent.
inline constexpr const char* kLastConversationKey = "app_last_conversation";
qint64 last_conversation(const settings::Settings& settings);
void set_last_conversation(settings::Settings& settings, qint64 id);

}  // namespace hearth::app
