#include "app/app_settings.h"

#include <QObject>

#include "engine/core/log.h"

namespace hearth::app {

namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

// Fills `out` from the file at `out.path`; problems become warnings.
void read_file(AppSettings& out) {
  auto loaded = settings::load_settings(out.path);
  if (!loaded) {
    out.warnings << QObject::tr("Could not read the settings (%1); using the defaults for this session.")
                        .arg(qs(loaded.error().describe()));
    out.path.clear();  // never overwrite a file we could not read
    return;
  }
  out.values = std::move(loaded->settings);
  out.first_start = loaded->first_start;
  for (const std::string& w : loaded->warnings) out.warnings << qs(w);
}

}  // namespace

AppSettings load_app_settings(const QString& path) {
  AppSettings out;
  if (!path.isEmpty()) {
    out.path = path.toStdString();
  } else if (auto found = settings::default_settings_path()) {
    out.path = *found;
  } else {
    out.warnings << QObject::tr("Settings will not be saved: %1").arg(qs(found.error().describe()));
  }
  if (!out.path.empty()) read_file(out);
  auto logger = log::get("app");
  for (const QString& w : out.warnings) logger->warn("settings: {}", w.toStdString());
  return out;
}

Result<void> save_app_settings(const AppSettings& settings) {
  if (settings.path.empty()) return make_error(ErrorCode::kNotFound, "no settings file to save to");
  return settings::save_settings(settings.values, settings.path);
}

models::RunConfig run_config_of(const settings::Settings& s) {
  models::RunConfig c;
  c.device = s.device;
  c.context_length = s.context_length;
  c.kv_precision = s.kv_precision;
  c.quant = s.weight_format;
  c.max_sequences = 4;
  return c;
}

Theme theme_of(const settings::Settings& settings) {
  switch (settings.theme) {
    case settings::Theme::kLight:
      return Theme::kLight;
    case settings::Theme::kDark:
      return Theme::kDark;
    case settings::Theme::kSystem:
      break;
  }
  return Theme::kSystem;
}

void set_theme(settings::Settings& settings, Theme theme) {
  switch (theme) {
    case Theme::kLight:
      settings.theme = settings::Theme::kLight;
      return;
    case Theme::kDark:
      settings.theme = settings::Theme::kDark;
      return;
    case Theme::kSystem:
      break;
  }
  settings.theme = settings::Theme::kSystem;
}

QByteArray blob_from_base64(const std::string& text) {
  auto decoded =
      QByteArray::fromBase64Encoding(QByteArray::fromStdString(text), QByteArray::AbortOnBase64DecodingErrors);
  return decoded ? *decoded : QByteArray();
}

std::string blob_to_base64(const QByteArray& blob) {
  return blob.toBase64().toStdString();
}

qint64 last_conversation(const settings::Settings& settings) {
  const auto it = settings.unknown_keys.find(kLastConversationKey);
  if (it == settings.unknown_keys.end()) return 0;
  bool ok = false;
  const qint64 id = QString::fromStdString(it->second).toLongLong(&ok);  // JSON text of an integer
  return ok && id > 0 ? id : 0;
}

void set_last_conversation(settings::Settings& settings, qint64 id) {
  if (id > 0) {
    settings.unknown_keys[kLastConversationKey] = std::to_string(id);
  } else {
    settings.unknown_keys.erase(kLastConversationKey);
  }
}

}  // namespace hearth::app
