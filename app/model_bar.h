// The model bar above the chat: which model (installed models from the models
// folder, or any GGUF through a file dialog; the "..." menu: a file, the model manager, load with options), Load /
// Unload with a busy indicator, and what the loaded model is: device (and why, for "auto"), weight format and KV
// precision, context use; for a remote endpoint, its address. Its device menu lists Automatic, the CPU and each CUDA
// device with its free memory, then "Remote endpoint...".
#pragma once

#include <QWidget>

#include <functional>
#include <vector>

#include "app/engine_types.h"
#include "hearth/devices.h"

class QAction;
class QComboBox;
class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QToolButton;

namespace hearth::app {

class ModelBar : public QWidget {
  Q_OBJECT

 public:
  explicit ModelBar(QWidget* parent = nullptr);

  void refreshInstalled();  // re-reads models::installed_models()
  QString selectedPath() const;
  QStringList paths() const;             // every model the list offers, in its order
  void selectPath(const QString& path);  // adds it to the list when missing
  void forgetPath(const QString& path);  // a file that would not load leaves the list

  // The device setting the menu shows as chosen ("auto", "cpu", "cuda:N").
  void setDeviceSetting(const QString& device);
  // The model manager button: shown where the build has the installer.
  void setManagerAvailable(bool available);
  QString deviceSetting() const { return device_setting_; }
  // Where the menu's entries come from (hearth::list_devices unless a test says otherwise).
  void setDeviceLister(std::function<std::vector<DeviceInfo>()> lister) { list_devices_ = std::move(lister); }
  QMenu* deviceMenu() const { return device_menu_; }

 public slots:
  void openFileDialog();
  void setLoading(const QString& path);
  void setLoaded(const hearth::app::LoadedModel& model);
  void setUnloaded();
  void setContextUsed(int used_tokens);

 signals:
  void loadRequested(const QString& path);
  void unloadRequested();
  void deviceChosen(const QString& device);  // "auto", "cpu" or "cuda:N", from the device menu
  void remoteRequested();                    // "Remote endpoint...", from the device menu
  void managerRequested();                   // "Model manager..." of the bar's "..." menu
  void loadOptionsRequested();               // "Load with options..." of the same menu

 private:
  void showContext();
  void fillDeviceMenu();
  void showRemote(const LoadedModel& model);

  QComboBox* models_ = nullptr;
  QToolButton* open_ = nullptr;
  QAction* manage_ = nullptr;
  QPushButton* load_ = nullptr;
  QPushButton* unload_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QToolButton* device_button_ = nullptr;
  QMenu* device_menu_ = nullptr;
  QString device_setting_ = QStringLiteral("auto");
  std::function<std::vector<DeviceInfo>()> list_devices_ = [] { return hearth::list_devices(); };
  QLabel* device_ = nullptr;
  QLabel* reason_ = nullptr;
  QLabel* quant_ = nullptr;
  QLabel* context_ = nullptr;
  int context_length_ = 0;
  int context_used_ = 0;
};

QString format_bytes(std::int64_t bytes);

}  // namespace hearth::app
